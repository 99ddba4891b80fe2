"""Server-rendered annotation pages, one module per area: ``problems`` (list, detail, images), ``imports``
(uploads and their reports), ``exports`` (Kit workspace zips) and ``passes`` (the workspace, source review, history and revert).
"""

from .exports import export_detail, export_download, export_list
from .imports import import_detail, import_list
from .passes import pass_history, pass_revert, pass_review, pass_workspace
from .problems import image_file, problem_detail, problem_list
from .source_queue import source_queue

__all__ = [
    "problem_list",
    "problem_detail",
    "image_file",
    "import_list",
    "import_detail",
    "export_list",
    "export_detail",
    "export_download",
    "pass_workspace",
    "pass_review",
    "pass_history",
    "pass_revert",
    "source_queue",
]
