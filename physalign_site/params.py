"""Request parameters (query strings, form fields, headers), read one way everywhere.

Text: a query parameter or form field holding what PostgreSQL cannot store (the NUL character; an unpaired
surrogate) would reach a filter or a save and fail there as a ``DataError`` (500). ``require_storable`` refuses
it with a 400 ``ApplicationError`` that names the field; ``physalign_site.middleware.StorableInputMiddleware``
calls it for the path, the query string and the form fields of every request (the API's form bodies in
``physalign_site.parsers``), so no view needs to.

Whole numbers:
``str.isdigit`` is not a test for "int() will accept this": ``'²'.isdigit()`` is True and ``int('²')``
raises, and a 5,000-digit string is "digits" that int() refuses and no database column holds. Every
view reads such a parameter through ``int_param`` / ``int_list_param``, which accept ASCII digits only
(up to ``MAX_INT``) and refuse anything else with one 400 ``ApplicationError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from . import jsonsafety
from .errors import ApplicationError

MAX_INT = 2**31 - 1  # the largest value an integer (not bigint) column holds
_DIGITS = re.compile(r"[0-9]{1,10}")


def int_param(value: str | None, *, name: str) -> int | None:
    """``None`` or blank → ``None``; ``"0"``…``"2147483647"`` → that number; anything else → a 400
    ``ApplicationError`` (code ``invalid_parameter``) that names the parameter."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DIGITS.fullmatch(text) is None or int(text) > MAX_INT:
        raise ApplicationError(
            f"{name} must be a whole number between 0 and {MAX_INT}.",
            code="invalid_parameter",
            extra={"parameter": name},
        )
    return int(text)


def int_list_param(values: Iterable[str], *, name: str) -> list[int]:
    """Every non-blank value through ``int_param`` (``?runs=3&runs=5`` → ``[3, 5]``)."""
    numbers = (int_param(value, name=name) for value in values)
    return [number for number in numbers if number is not None]


def require_storable(data: Any, *, where: str) -> None:
    """Every key and value of ``data`` (a ``QueryDict`` or ``MultiValueDict`` of text, e.g. ``request.GET``)
    storable in a text column, else a 400 ``ApplicationError`` (code ``unstorable_text``) that names the
    field: ``where`` says which kind (``"query parameter"``, ``"form field"``). File parts are not here."""
    for name, values in data.lists():
        for text in (name, *values):
            if not isinstance(text, str):
                continue
            bad = jsonsafety.unstorable_character(text)
            if bad is None:
                continue
            shown = jsonsafety.printable(name)
            raise ApplicationError(
                f'The {where} "{shown}" contains {bad}, which cannot be stored.',
                code="unstorable_text",
                extra={"parameter": shown, "in": where},
            )


def require_storable_path(path: str) -> None:
    """The URL path (whose parts become ids in lookups) under the same rule."""
    bad = jsonsafety.unstorable_character(path)
    if bad is not None:
        raise ApplicationError(
            f"The URL path contains {bad}, which cannot be stored.",
            code="unstorable_text",
            extra={"parameter": "path", "in": "path"},
        )
