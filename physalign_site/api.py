"""What every app's REST API shares: the role permission factory, the page rule, the error shape (and the
refusals an operation declares) and the typed pass-through fields output serializers use for stored JSON."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def role_permission(
    check: Callable[..., bool] | None = None,
    *,
    unsafe: Callable[..., bool] | None = None,
    kwargs: Iterable[str] = (),
    on_object: Callable[[Any, Any], bool] | None = None,
    message: str | None = None,
    name: str = "RolePermission",
) -> type[BasePermission]:
    """A DRF permission wrapping the role checks of an app's ``permissions`` module.

    ``check(user)`` decides reads and writes, ``unsafe(user)`` (when given) decides writes; without either
    any authenticated user passes. ``kwargs`` names URL keyword arguments handed to both checks
    (``kwargs=("pass_no",)`` → ``check(user, pass_no=3)``). ``on_object(user, obj)`` is asked when the view
    calls ``self.check_object_permissions(request, obj)`` after loading its object, so a missing object
    stays a 404 and a refused one is a 403. ``message`` replaces DRF's default refusal text.
    An anonymous request is refused before any check (DRF answers it with 401 and the token challenge).
    """
    names = tuple(kwargs)

    def has_permission(self: BasePermission, request: Request, view: APIView) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        arguments = {key: view.kwargs[key] for key in names}
        if unsafe is not None and request.method not in SAFE_METHODS:
            return unsafe(user, **arguments)
        return check is None or check(user, **arguments)

    def has_object_permission(self: BasePermission, request: Request, view: APIView, obj: Any) -> bool:
        return on_object is None or on_object(request.user, obj)

    attributes: dict[str, Any] = {
        "has_permission": has_permission,
        "has_object_permission": has_object_permission,
    }
    if message is not None:
        attributes["message"] = message
    return type(name, (BasePermission,), attributes)


class ApiCursorPagination(CursorPagination):
    """The page rule of every list that can grow: keyset pages ``{next, previous, results}``, 50 rows by
    default, ``page_size`` up to 500; a view sets ``ordering`` to a unique key (newest first: ``"-pk"``, the
    default), so a late page costs what the first does and a row added meanwhile is neither skipped nor
    repeated. A cursor that does not decode (or carries a NUL) is a 404."""

    ordering = "-pk"
    page_size = 50
    max_page_size = 500
    page_size_query_param = "page_size"

    def get_ordering(self, request: Any, queryset: Any, view: Any) -> tuple[str, ...]:
        # the view's ``ordering`` (a unique key) wins over the default; an OrderingFilter on the view still
        # decides when the client asks (``?ordering=``), among the view's ``ordering_fields``
        ordering = getattr(view, "ordering", None)
        if ordering:
            self.ordering = ordering
        return tuple(super().get_ordering(request, queryset, view))

    def decode_cursor(self, request: Any) -> Any:
        cursor = super().decode_cursor(request)
        # the stubs type Cursor.position int; decode_cursor takes it from the query string, as text
        position: str | None = cursor.position if cursor is not None else None  # type: ignore[assignment]
        if position is not None and not position.isprintable():
            raise NotFound(self.invalid_cursor_message)  # a NUL would reach the database as a literal
        return cursor


def cursor_page(view: APIView, request: Request, rows: Any, render: Callable[[list[Any]], Any]) -> Response:
    """One keyset page of ``rows`` (a queryset) in the view's ``ordering``; ``render(page)`` gives the
    ``results``. The view names ``pagination_class = ApiCursorPagination`` too, for the schema."""
    pages = ApiCursorPagination()
    page: list[Any] | None = pages.paginate_queryset(rows, request, view=view)
    assert page is not None  # None only without a page size, and the rule has one
    return pages.get_paginated_response(render(page))


JSON_VALUE_REF = {"$ref": "#/components/schemas/JsonValue"}
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "A JSON value, as stored: a string, number, boolean, null, or an array or object of them.",
    "nullable": True,
    "oneOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": JSON_VALUE_REF},
        {"type": "object", "additionalProperties": JSON_VALUE_REF},
    ],
}


JSON_MAP: dict[str, Any] = {"type": "object", "additionalProperties": JSON_VALUE_REF}


def run_manifest_schema(description: str, **properties: dict[str, Any]) -> dict[str, Any]:
    """A run manifest as stored: what every run kind records (code revision, Python and package versions,
    seed, options, release), then the kind's own keys (``properties``)."""
    return {
        "type": "object",
        "description": description,
        "properties": {
            "schema": {
                "type": "string",
                "description": "The manifest's format, e.g. physalign_eval_manifest_v1",
            },
            "code_revision": {"type": "string"},
            "python": {"type": "string"},
            "packages": {"type": "object", "additionalProperties": {"type": "string"}},
            "seed": {"type": "integer"},
            "options": {**JSON_MAP, "description": "The run's options as launched"},
            "release": {"type": "string", "nullable": True, "description": "The release id (NREL-…)"},
            "scoring": {**JSON_MAP, "description": "The scoring rules and their versions"},
            **properties,
        },
        "additionalProperties": JSON_VALUE_REF,
    }


@extend_schema_field(JSON_VALUE_SCHEMA, component_name="JsonValue")
class JsonValueField(serializers.JSONField):
    """Any JSON value, rendered as stored, documented as the ``JsonValue`` component (a typed union, so a
    schema may name it: ``JSON_VALUE_REF``). For what nothing narrower describes: a refusal's details, an
    audited object's fields, one field of a record compared across versions."""


@extend_schema_serializer(component_name="ApiError")
class ApiErrorOutput(serializers.Serializer):
    """Every refusal (``physalign_site.errors``): a sentence, a stable code, details."""

    message = serializers.CharField()
    code = serializers.CharField()
    extra = serializers.DictField(
        child=JsonValueField(),
        help_text="Details, named by the code (validation_error: ``fields``, field → messages; a stale "
        "version: ``current_version``; …); {} when there are none.",
    )


def errors(*codes: int) -> dict[int, type[ApiErrorOutput]]:
    """The refusals an operation answers, each an ``ApiErrorOutput``:
    ``responses={200: Output, **errors(401, 403, 404)}``. Name exactly the codes the view can answer: 401
    (anonymous: every view but the token one), 403 (a role refused), 404 (a missing object, a bad cursor),
    400 (an invalid body or query), 409/428 (the rules of a write)."""
    return dict.fromkeys(codes, ApiErrorOutput)


def choice_string(choices: Iterable[tuple[str, str]], **kwargs: Any) -> serializers.CharField:
    """A read-only choice documented in prose. ``status`` names different choice sets on different
    models, and spectacular would merge same-named enums into colliding components."""

    @extend_schema_field({"type": "string", "description": "One of: " + ", ".join(v for v, _ in choices)})
    class ChoiceString(serializers.CharField):
        pass

    return ChoiceString(read_only=True, **kwargs)


def json_value(schema: dict[str, Any], **kwargs: Any) -> serializers.JSONField:
    """A value rendered exactly as stored or computed (stored JSON, numbers that may be int or float),
    documented by ``schema``: the schema names its type, the output keeps its bytes."""

    @extend_schema_field(schema)
    class JsonValue(serializers.JSONField):
        pass

    return JsonValue(**kwargs)


def json_object(description: str = "", **kwargs: Any) -> serializers.JSONField:
    """A JSON object whose inner shape is open: only a Kit document (a pass document, a Kit record, a probe
    key), which the description names ("A Kit pass document …"); everything else gets a typed schema
    (``json_value``)."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": {}}
    if description:
        schema["description"] = description
    return json_value(schema, **kwargs)


def json_list(
    items: dict[str, Any] | None = None, description: str = "", **kwargs: Any
) -> serializers.JSONField:
    """A JSON array rendered as stored (``items`` types its elements; open when omitted)."""
    schema: dict[str, Any] = {"type": "array", "items": items or {}}
    if description:
        schema["description"] = description
    return json_value(schema, **kwargs)


def number(description: str = "", **kwargs: Any) -> serializers.JSONField:
    """A number passed through unchanged (a FloatField would turn ``1`` into ``1.0``); ``allow_null=True``
    documents a null."""
    schema: dict[str, Any] = {"type": "number"}
    if description:
        schema["description"] = description
    return json_value(schema, **kwargs)


def choice_input(
    choices: Iterable[Any], *, as_pattern: bool = False, **kwargs: Any
) -> serializers.ChoiceField:
    """A ChoiceField (the same validation and messages) documented as a string enum. ``as_pattern`` states
    the choices as an anchored pattern instead, for a name that already carries another choice set in the
    schema (``status``): spectacular turns every enum into a component named after its field and renames
    colliding ones with a warning."""
    values = [choice[0] if isinstance(choice, tuple | list) else choice for choice in choices]
    schema: dict[str, Any] = {"type": "string", "description": "One of: " + ", ".join(values)}
    if as_pattern:
        schema["pattern"] = "^(" + "|".join(re.escape(value) for value in values) + ")$"
    else:
        schema["enum"] = values

    @extend_schema_field(schema)
    class InlineChoice(serializers.ChoiceField):
        pass

    return InlineChoice(choices=list(choices), **kwargs)
