"""The one role check of server-rendered pages: ``@require(check)``.

``check`` is a function of an app's ``permissions`` module, ``user -> bool``. The REST API uses the same
functions through ``physalign_site.api.role_permission``; object-level rules (``can_work_slot(user, slot)``)
are asked by the view once it has loaded the object, so a missing object stays a 404.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase

View = Callable[..., HttpResponseBase]


def require(check: Callable[..., bool], *, kwargs: Iterable[str] = ()) -> Callable[[View], View]:
    """Refuse a page to users ``check`` refuses: anonymous → the login page (exactly ``login_required``),
    signed in but refused → ``PermissionDenied`` (403). ``kwargs`` names URL keyword arguments passed on to
    the check (``@require(can_read_pass, kwargs=("pass_no",))`` → ``can_read_pass(user, pass_no=3)``).

    Put it right above the view function, under ``@login_required`` and the method decorators, so a wrong
    method is a 405 before any role is looked at, as it always was."""
    names = tuple(kwargs)

    def decorator(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **view_kwargs: Any) -> HttpResponseBase:
            if not check(request.user, **{name: view_kwargs[name] for name in names}):
                raise PermissionDenied
            return view(request, *args, **view_kwargs)

        return login_required(checked)

    return decorator
