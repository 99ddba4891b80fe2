"""What every app's REST API shares: the role permission factory, the page size rules, the error shape and
the typed pass-through fields output serializers use for stored JSON."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
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


class ApiPagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200


class ApiCursorPagination(CursorPagination):
    """The page rule of every list that can grow: keyset pages ``{next, previous, results}``, 50 rows by
    default, ``page_size`` up to 500; a view sets ``ordering`` to a unique key (newest first: ``"-pk"``), so a
    late page costs what the first does and a row added meanwhile is neither skipped nor repeated."""

    ordering = "-pk"
    page_size = 50
    max_page_size = 500
    page_size_query_param = "page_size"

    def decode_cursor(self, request: Any) -> Any:
        cursor = super().decode_cursor(request)
        # the stubs type Cursor.position int; decode_cursor takes it from the query string, as text
        position: str | None = cursor.position if cursor is not None else None  # type: ignore[assignment]
        if position is not None and not position.isprintable():
            raise NotFound(self.invalid_cursor_message)  # a NUL would reach the database as a literal
        return cursor


@extend_schema_serializer(component_name="ApiError")
class ApiErrorOutput(serializers.Serializer):
    """Every refusal (``physalign_site.errors``): a sentence, a stable code, details."""

    message = serializers.CharField()
    code = serializers.CharField()
    extra = serializers.DictField()


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
    """A JSON object whose inner shape is open (stored Kit records, settings, metrics)."""
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
