"""The top of the tree: the site's root URLconf (``urls``, ``ROOT_URLCONF``), which wires every app's URLs.

It imports each app's URL module (never an ``include("app.urls")`` string), so the layers contract
(``[tool.importlinter]`` in pyproject.toml) sees that only this package, above every app, reaches all of them,
and that ``physalign_site`` below them reaches none.
"""
