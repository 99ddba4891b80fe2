"""The OpenAPI schema's rules, on the schema ``manage.py spectacular`` writes (in-process):

(a) every property of every component has a type (``type``, ``$ref``, ``allOf``/``oneOf``/``anyOf`` or
    ``enum``), nested properties, array items, map values and union members included;
(b) an open object (``type: object`` with neither properties nor typed values) is a Kit document, and its
    description says so ("Kit …");
(c) every operation declares its error responses (at least one 4xx), and every list (a GET answering an
    array or a page) pages by cursor (``{next, previous, results}`` and a ``cursor`` parameter), unless
    its length is fixed by the protocol (``FIXED_LENGTH_LISTS``, each with its reason);
(d) ``spectacular --validate --fail-on-warn`` passes.

Each assertion lists every offender.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS

TYPED = ("type", "$ref", "allOf", "oneOf", "anyOf", "enum")
UNIONS = ("allOf", "oneOf", "anyOf")
METHODS = ("get", "post", "put", "patch", "delete")
CURSOR_PAGE = {"next", "previous", "results"}

# A list may be a bare array only when the protocol fixes its length: operation → why.
FIXED_LENGTH_LISTS = {
    "GET /api/parents/{problem_id}/passes/": "one pass document per pass of the protocol: at most five",
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """The schema as ``spectacular --validate --fail-on-warn`` writes it, and the error it raised ('' if none)."""
    path = Path(tmp_path_factory.mktemp("schema")) / "schema.yml"
    GENERATOR_STATS.reset()  # warnings of schemas generated earlier in this process are not this run's
    try:
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
        failure = ""
    except BaseException as exc:  # noqa: BLE001  # the command fails by raising (or by SystemExit)
        failure = f"{type(exc).__name__}: {exc}"
    if not path.is_file():  # --fail-on-warn raises after writing; a crash may not have written
        call_command("spectacular", "--file", str(path))
    return yaml.safe_load(path.read_text()), failure


@pytest.fixture(scope="module")
def schema(generated: tuple[dict[str, Any], str]) -> dict[str, Any]:
    return generated[0]


def _is_open_object(node: dict[str, Any]) -> bool:
    if node.get("type") != "object" or node.get("properties"):
        return False
    values = node.get("additionalProperties", True)
    return values is True or (isinstance(values, dict) and not any(key in values for key in TYPED))


def _walk(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node under ``node`` (itself included), named by its path from the component."""
    if not isinstance(node, dict):
        return
    yield where, node
    for name, child in (node.get("properties") or {}).items():
        yield from _walk(child, f"{where}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], f"{where}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], f"{where}{{}}")
    for union in UNIONS:
        for index, member in enumerate(node.get(union) or []):
            yield from _walk(member, f"{where}<{union}[{index}]>")


def _nodes(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, component in schema["components"]["schemas"].items():
        yield from _walk(component, name)


def _operations(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_the_schema_validates_without_warnings(generated):
    _, failure = generated
    assert not failure, f"spectacular --validate --fail-on-warn: {failure}"


def test_every_component_property_has_a_type(schema):
    untyped = []
    for where, node in _nodes(schema):
        for name, prop in (node.get("properties") or {}).items():
            if not any(key in prop for key in TYPED):
                untyped.append(f"{where}.{name}")
        items = node.get("items")
        if node.get("type") == "array" and isinstance(items, dict) and not any(key in items for key in TYPED):
            untyped.append(f"{where}[]")
    assert not untyped, f"{len(untyped)} properties without a type:\n  " + "\n  ".join(untyped)


def test_open_objects_are_kit_documents_named_in_their_description(schema):
    unnamed = [
        f"{where}: {node.get('description', '(no description)')!r}"
        for where, node in _nodes(schema)
        if _is_open_object(node) and "Kit" not in node.get("description", "")
    ]
    assert not unnamed, (
        f"{len(unnamed)} open objects that are not named as a Kit document (type them, or say which Kit "
        "document they are):\n  " + "\n  ".join(unnamed)
    )


def test_every_operation_declares_its_error_responses(schema):
    silent = [
        name for name, op in _operations(schema) if not any(str(c).startswith("4") for c in op["responses"])
    ]
    assert not silent, f"{len(silent)} operations without a 4xx response:\n  " + "\n  ".join(silent)


def test_error_responses_are_the_error_shape(schema):
    wrong = []
    for name, op in _operations(schema):
        for code, response in op["responses"].items():
            if not str(code).startswith("4") or "content" not in response:
                continue
            body = response["content"].get("application/json", {}).get("schema", {})
            if body.get("$ref") != "#/components/schemas/ApiError":
                wrong.append(f"{name} {code}: {body}")
    assert not wrong, f"{len(wrong)} error responses not shaped as ApiError:\n  " + "\n  ".join(wrong)


def test_every_list_pages_by_cursor_or_has_a_fixed_length(schema):
    offenders = []
    for name, op in _operations(schema):
        if not name.startswith("GET "):
            continue
        ok = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema")
        if not ok:
            continue
        body = _resolve(schema, ok)
        page = "results" in (body.get("properties") or {})
        if body.get("type") == "array":
            if name not in FIXED_LENGTH_LISTS:
                offenders.append(f"{name}: a bare array")
        elif page:
            parameters = {p.get("name") for p in op.get("parameters", [])}
            if set(body["properties"]) != CURSOR_PAGE or "cursor" not in parameters:
                offenders.append(f"{name}: pages {sorted(body['properties'])} by {sorted(parameters)}")
    assert not offenders, (
        f"{len(offenders)} lists that neither page by cursor nor are of a fixed length:\n  "
        + "\n  ".join(offenders)
    )


def test_the_fixed_length_lists_exist_and_say_so(schema):
    operations = dict(_operations(schema))
    for name in FIXED_LENGTH_LISTS:
        assert name in operations, f"{name}: allowed a bare array, but no such operation"
        assert "never paginated" in operations[name].get("description", ""), (
            f"{name}: a fixed-length list says so in its description"
        )
