"""The JSON and form parsers of every API view (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``).

DRF's own JSON and form parsers read the whole stream without a size limit and hands on whatever ``json.load``
returns: a body nested 5,000 levels deep is a RecursionError (500), a ``\\u0000`` or ``"\\ud800"``
string reaches PostgreSQL and fails there (500). This one reads at most
``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (more is ``RequestDataTooBig``, a JSON 413 through
``physalign_site.errors``) and parses through ``physalign_site.jsonsafety`` (no string longer than
``PHYSALIGN_TEXT_MAX_CHARS``, the limit imports keep too; duplicate keys, NaN and bad UTF-8 refused), so
every refusal is a 400 that says what and where. Form and multipart bodies get the check every page's form
fields get (``physalign_site.params.require_storable``): a NUL or unpaired surrogate in a text field is a 400
that names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import QueryDict
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from . import jsonsafety


def _encoding(parser_context: Mapping[str, Any]) -> str:
    """DRF's ``get_encoding``: the declared charset, refusing codecs that are not text encodings."""
    found: str = parsers.get_encoding(parser_context)  # type: ignore[attr-defined]  # the stubs lag DRF
    return found


def _declared_length(parser_context: Mapping[str, Any]) -> int:
    request = parser_context.get("request")
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
    except ValueError:
        return 0


def read_limited(stream: Any, *, parser_context: Mapping[str, Any]) -> bytes:
    """The body, or ``RequestDataTooBig`` when it (or its declared length) exceeds the limit."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None:
        return stream.read()
    if _declared_length(parser_context) > limit:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    body = stream.read(limit + 1)
    if len(body) > limit:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    return body


class JSONParser(parsers.JSONParser):
    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        parser_context = parser_context or {}
        encoding = _encoding(parser_context)
        body = read_limited(stream, parser_context=parser_context)
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not valid {encoding}: {exc}") from exc
        try:
            return jsonsafety.loads(text, max_string=settings.PHYSALIGN_TEXT_MAX_CHARS)
        except jsonsafety.JSONRejected as exc:
            # imported here: rest_framework.views imports this module (the default parsers) while
            # physalign_site.errors is importing rest_framework.views
            from .errors import ApplicationError

            raise ApplicationError(exc.message, code=exc.code, extra={"path": exc.path}) from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


def _storable_fields(data: Any) -> Any:
    """The form fields of an API body under the rule every page's fields follow (``StorableInputMiddleware``):
    a NUL or unpaired surrogate is a 400 that names the field."""
    from .params import require_storable  # see JSONParser.parse: imported while rest_framework loads

    require_storable(data, where="form field")
    return data


class FormParser(parsers.FormParser):
    """DRF's form parser with Django's own body limit (DRF reads the stream past ``request.body``'s check)
    and the storable-text check of every field."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        parser_context = parser_context or {}
        encoding = _encoding(parser_context)
        return _storable_fields(
            QueryDict(read_limited(stream, parser_context=parser_context), encoding=encoding)
        )


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser (Django's limits) with the storable-text check of every text field; the
    files' content is not text and may hold any byte."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        _storable_fields(parsed.data)
        return parsed
