"""A fuzz of every HTML view: every URL route × every role (each role of ``role_users``, anonymous, a user
with no role) × hostile values in each query parameter the view reads and each form field it takes — the
NUL character, lone surrogates, bytes that are not UTF-8, huge, negative and digit-like numbers, 1e30,
NaN, deeply nested JSON and very long strings — sent over the test client, and no answer may be a 5xx.
The API has its own schema fuzz (``tests/test_api_fuzz.py``).

Routes come from Django's URL resolver; path parameters name real objects of the endpoint matrix's world
(``tests/endpoint_matrix``): the matrix's own URLs of the route first, else ids read from the database.
The parameters a view reads are read from its source (``request.GET.get("x")``, ``request.POST…``, the
``for k in ("a", "b")`` loops around them, and the fields of every form the view builds from the request,
also one call deep into the module's helpers), so a new parameter is fuzzed without a list to keep. A
POST starts from the matrix's valid body for that route (when it has one) with one field made hostile,
so it gets past "required" into the code that uses the field.

The run is deterministic (no randomness: roles rotate over the values by index) and bounded (``PER_ROUTE``;
about 2,000 hostile requests, well under a minute on two cores): every request runs in a savepoint that is
rolled back (each one sees the same world), and the count of hostile requests is printed and asserted.
"""

from __future__ import annotations

import ast
import copy
import inspect
import logging
import re
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote_from_bytes, urlsplit

import pytest
from django import forms
from django.apps import apps
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.urls.exceptions import NoReverseMatch, Resolver404

from tests import test_api_fuzz, test_endpoint_matrix
from tests.endpoint_matrix import ANON, NOROLE, ROLES, World, value_of
from tests.test_endpoint_matrix import CASES

pytestmark = pytest.mark.django_db

# The endpoint matrix's fixtures: every role's user (anonymous, no role …) and the world its rows point at.
users = test_endpoint_matrix.users
world = test_endpoint_matrix.world
no_network = test_api_fuzz.no_network  # nothing leaves the process

DEEP_ARRAYS = "[" * 5000 + "]" * 5000
DEEP_OBJECTS = '{"a":' * 3000 + "1" + "}" * 3000
# Each value as the bytes an attacker puts on the wire (percent-encoded in a query string or a form body).
# Django decodes the wire with replacement, so the UTF-8 form of a surrogate arrives as U+FFFD: a view sees
# a lone surrogate only from code (tests/test_inputs_hostile.py checks that case on the one check itself).
HOSTILE: list[tuple[str, bytes]] = [
    ("nul", b"ab\x00cd"),
    ("lone surrogate", "x\ud800".encode("utf-8", "surrogatepass")),
    ("not utf-8", b"\xff\xfe\xc3"),
    ("huge", b"99999999999999999999"),
    ("past int32", b"2147483648"),
    ("negative", b"-1"),
    ("1e30", b"1e30"),
    ("nan", b"NaN"),
    ("digit-like", "²٣".encode()),
    ("deep arrays", DEEP_ARRAYS.encode()),
    ("deep objects", DEEP_OBJECTS.encode()),
    ("very long", b"x" * 100_000),
]
HUGE_ID = "99999999999999999999"
# The most requests per route and pass (query parameters; form fields): today every parameter gets every
# value; a view with more than 25 would get, per parameter, a window of the values that slides along the
# list (deterministic), so the run stays bounded as forms grow.
PER_ROUTE = 300
# 5xx the fuzz finds in views another change owns: (route name, parameter) → what fails (reported, not failed)
KNOWN: dict[tuple[str, str], str] = {}
# Django's admin: the role users are not staff, so every admin page sends them to the admin login; its
# routes get the route × role pass only.
ADMIN_NAMESPACE = "admin"


# --- routes and the values of their path parameters -------------------------------------------------------


@dataclass
class Route:
    pattern: str  # "problems/<str:problem_id>/"
    name: str  # "annotation:problem_detail"
    callback: Callable[..., Any]
    urls: list[str] = field(default_factory=list)  # concrete paths (with any base query of the matrix)
    post_bodies: list[tuple[dict[str, Any], list[str]]] = field(default_factory=list)  # (body, roles ok)
    get_roles: list[str] = field(default_factory=list)  # roles the matrix expects to open it

    @property
    def admin(self) -> bool:
        return self.name.split(":")[0] == ADMIN_NAMESPACE


def _routes() -> list[Route]:
    found: list[Route] = []

    def walk(patterns: list[Any], prefix: str, namespace: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                inner = ":".join(p for p in (namespace, entry.namespace or "") if p)
                walk(entry.url_patterns, prefix + str(entry.pattern), inner)
            elif isinstance(entry, URLPattern):
                name = ":".join(p for p in (namespace, entry.name or "") if p)
                found.append(Route(prefix + str(entry.pattern), name, entry.callback))

    walk(get_resolver().url_patterns, "", "")
    return [r for r in found if not r.pattern.startswith("api/")]


def _first(label: str, field_name: str, **filters: Any) -> Any:
    return apps.get_model(label).objects.filter(**filters).values_list(field_name, flat=True).first()


def _db_kwargs() -> dict[str, Any]:
    """A real value for every path parameter name the HTML routes use (for routes the matrix has no URL of)."""
    probe = apps.get_model("probes.Probe").objects.exclude(attachment_ids=[]).first()
    parent = apps.get_model("annotation.ParentProblem").objects.filter(images__isnull=False).first()
    slot = apps.get_model("review.ReviewSlot").objects.first()
    return {
        "pk": _first("evaluation.EvalRun", "pk"),
        "run_id": _first("probes.CompileRun", "pk"),
        "job_id": _first("annotation.ImportJob", "pk"),
        "draft_id": _first("annotation.LLMDraft", "pk"),
        "problem_id": parent.problem_id if parent else "missing",
        "image_id": parent.images.first().image_id if parent else "img_0",
        "pass_no": 1,
        "version": 1,
        "logical_probe_id": probe.logical_probe_id if probe else "missing",
        "asset_id": probe.attachment_ids[0] if probe else "V1",
        "release_id": _first("probes.Release", "release_id"),
        "slot_id": slot.pk if slot else 1,
        "campaign_pk": _first("review.AuditCampaign", "pk"),
        "fmt": "csv",
        "action": "cancel",
        # Django's admin: any id (the role users are not staff, so every admin page sends them to its login)
        "object_id": 1,
        "id": 1,
        "content_type_id": 1,
        "app_label": "auth",
        "url": "missing/",
    }


def _kwarg_names(pattern: str) -> list[str]:
    """The path parameters of a route pattern: ``<conv:name>`` and regex ``(?P<name>…)`` groups."""
    names = list(re.compile(pattern).groupindex) if "(?P<" in pattern else []
    return names + [
        spec.partition(">")[0].split(":")[-1] for spec in pattern.split("<")[1:] if "(?P" not in spec
    ]


def _fill(pattern: str, values: dict[str, Any]) -> str | None:
    """The pattern with each ``<conv:name>`` replaced by its value (None when a value is missing)."""
    out, rest = "", pattern
    while "<" in rest:
        head, _, tail = rest.partition("<")
        spec, _, rest = tail.partition(">")
        name = spec.split(":")[-1]
        if values.get(name) is None:
            return None
        out += head + str(values[name])
    return "/" + out + rest


def _attach_matrix_urls(routes: list[Route], built: World) -> None:
    """Each route gets the matrix's URLs of it (path + query), the roles that may open it and its valid POST
    bodies, then a URL from database ids when the matrix has none."""
    by_name = {r.name: r for r in routes}
    for case in CASES:
        url = value_of(case.url, built)
        if url.startswith("/api/"):
            continue
        try:
            match = resolve(urlsplit(url).path)
        except Resolver404:
            continue
        route = by_name.get(match.view_name)
        if route is None:
            continue
        allowed = [role for role, status in case.expected.items() if status < 400 and role != ANON]
        if case.method == "get":
            if url not in route.urls:
                route.urls.append(url)
            route.get_roles.extend(r for r in allowed if r not in route.get_roles)
        elif case.method == "post":
            body = value_of(case.body, built)
            if url not in route.urls:
                route.urls.append(url)
            if isinstance(body, dict) and allowed:
                route.post_bodies.append((body, allowed))
    kwargs = _db_kwargs()
    for route in routes:
        if not route.urls:
            try:
                url = reverse(route.name, kwargs={n: kwargs[n] for n in _kwarg_names(route.pattern)})
            except (KeyError, NoReverseMatch):  # unnamed (the admin's redirects, its catch-all)
                plain = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route.pattern).strip("^$")
                url = _fill(plain.replace("^", "").replace("$", ""), kwargs)
            if url is not None:
                route.urls.append(url)


# --- the parameters a view reads, from its source ---------------------------------------------------------


@dataclass
class Params:
    get: set[str] = field(default_factory=set)
    post: set[str] = field(default_factory=set)


def _form_fields(form_class: Any) -> set[str]:
    names = set(getattr(form_class, "base_fields", {}))
    try:
        names |= set(form_class().fields)  # fields added in __init__ (confirm_<key> …)
    except Exception:  # a form that needs arguments keeps its declared fields
        pass
    return names


def _source_tree(function: Any) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None


def _request_dict(node: ast.AST) -> str | None:
    """``"GET"``/``"POST"`` when ``node`` is ``<something>.GET`` / ``.POST`` (``request.GET`` …)."""
    if isinstance(node, ast.Attribute) and node.attr in ("GET", "POST"):
        return node.attr
    return None


def _names_of(iterable: ast.AST) -> list[str]:
    if isinstance(iterable, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in iterable.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _scan(function: Any, module: Any, params: Params, depth: int = 0) -> None:
    tree = _source_tree(function)
    if tree is None:
        return
    loops: dict[str, list[str]] = {}  # loop variable → the literal names it runs over
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension | ast.For) and isinstance(node.target, ast.Name):
            loops.setdefault(node.target.id, []).extend(_names_of(node.iter))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            # request.GET.get("x") / getlist("x")
            if isinstance(func, ast.Attribute) and func.attr in ("get", "getlist") and node.args:
                kind = _request_dict(func.value)
                if kind:
                    arg = node.args[0]
                    names = (
                        [arg.value]
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                        else loops.get(arg.id, [])
                        if isinstance(arg, ast.Name)
                        else []
                    )
                    (params.get if kind == "GET" else params.post).update(names)
            # SomeForm(request.POST or None, request.FILES …) / SomeForm(request.GET)
            if isinstance(func, ast.Name) and node.args:
                first = node.args[0]
                kind = _request_dict(first.values[0] if isinstance(first, ast.BoolOp) else first)
                target = getattr(module, func.id, None)
                if kind and inspect.isclass(target) and issubclass(target, forms.BaseForm):
                    (params.get if kind == "GET" else params.post).update(_form_fields(target))
            # SomeFilters.from_query(request.GET): a class that names the parameters it reads (QUERY_PARAMS)
            if isinstance(func, ast.Attribute) and func.attr == "from_query" and node.args:
                kind = _request_dict(node.args[0])
                owner = getattr(module, func.value.id, None) if isinstance(func.value, ast.Name) else None
                if kind and owner is not None:
                    (params.get if kind == "GET" else params.post).update(owner.QUERY_PARAMS)
            # one call deep into a module helper handed the request
            if (
                depth == 0
                and isinstance(func, ast.Name)
                and any(isinstance(a, ast.Name) and a.id == "request" for a in node.args)
            ):
                helper = getattr(module, func.id, None)
                if inspect.isfunction(helper) and helper.__module__ == module.__name__:
                    _scan(helper, module, params, depth + 1)
        elif isinstance(node, ast.Subscript):
            kind = _request_dict(node.value)
            if kind and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                (params.get if kind == "GET" else params.post).add(node.slice.value)


@cache
def _params_of(callback: Any) -> Params:
    params = Params()
    view_class = getattr(callback, "view_class", None)
    if view_class is not None:  # class-based (login, logout): the form class and the redirect field
        form_class = getattr(view_class, "form_class", None)
        if form_class is not None and inspect.isclass(form_class):
            params.post |= set(getattr(form_class, "base_fields", {}))
        params.get.add(getattr(view_class, "redirect_field_name", "next"))
        for name in ("get", "post", "dispatch"):
            method = getattr(view_class, name, None)
            if method is not None and getattr(method, "__module__", "").split(".")[0] not in ("django",):
                _scan(method, inspect.getmodule(method), params)
        return params
    function = inspect.unwrap(callback)
    _scan(function, inspect.getmodule(function), params)
    return params


# --- requests -----------------------------------------------------------------------------------------------


def _encode(pairs: list[tuple[str, bytes | str]]) -> str:
    """A query string / urlencoded body of raw bytes (a surrogate or non-UTF-8 byte goes as it is)."""
    parts = []
    for name, value in pairs:
        raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        parts.append(f"{quote_from_bytes(name.encode(), safe='')}={quote_from_bytes(raw, safe='')}")
    return "&".join(parts)


def _form_pairs(body: dict[str, Any]) -> list[tuple[str, bytes | str]]:
    pairs: list[tuple[str, bytes | str]] = []
    for name, value in body.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if hasattr(item, "read"):  # a file of a multipart matrix body: not a text field
                continue
            pairs.append((name, "" if item is None else str(item)))
    return pairs


@dataclass
class Fuzz:
    clients: dict[str, Client]
    cookies: dict[str, SimpleCookie]
    sent: int = 0
    hostile: int = 0
    failures: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    known: dict[tuple[str, str], str] = field(default_factory=dict)

    def send(
        self,
        role: str,
        method: str,
        path: str,
        query: str = "",
        body: str | None = None,
        *,
        label: str,
        hostile: bool = True,
        route: str = "",
        param: str = "",
    ) -> int | None:
        client = self.clients[role]
        client.cookies = copy.deepcopy(self.cookies[role])  # a logout (or a new session) cannot stick
        self.sent += 1
        self.hostile += hostile
        savepoint = transaction.savepoint_create()
        try:
            kwargs: dict[str, Any] = {"QUERY_STRING": query}
            if method == "post":
                response = client.post(
                    path,
                    data=(body or "").encode("latin-1"),
                    content_type="application/x-www-form-urlencoded",
                    **kwargs,
                )
            else:
                response = client.get(path, **kwargs)
            status = response.status_code
        except Exception as exc:  # the view raised: a 500 in production
            tail = "".join(traceback.format_exception(exc)[-4:])
            failure = f"{method.upper()} {path}?{query[:120]} as {role} [{label}]: {tail}"
            if (route, param) in KNOWN:
                self.known.setdefault((route, param), failure)
            else:
                self.failures.append(failure)
            return None
        finally:
            transaction.savepoint_rollback(savepoint)
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status >= 500:
            self.failures.append(f"{method.upper()} {path}?{query[:120]} as {role} [{label}]: {status}")
        return status


def _split(url: str) -> tuple[str, list[tuple[str, bytes | str]]]:
    parts = urlsplit(url)
    return parts.path, list(parse_qsl(parts.query, keep_blank_values=True))


def _with(base: list[tuple[str, bytes | str]], name: str, value: bytes) -> list[tuple[str, bytes | str]]:
    return [(k, v) for k, v in base if k != name] + [(name, value)]


def _rotate(items: list[str], index: int) -> str:
    return items[index % len(items)]


def _values_for(index: int, count: int) -> list[tuple[str, bytes]]:
    """The hostile values parameter ``index`` of ``count`` gets: all of them, or within ``PER_ROUTE`` a window
    of at least four that starts one further along for each parameter, so every value is used."""
    width = max(4, min(len(HOSTILE), PER_ROUTE // max(count, 1)))
    return [HOSTILE[(index + k) % len(HOSTILE)] for k in range(width)]


def _hostile_path(route: Route, url: str) -> Iterator[tuple[str, str]]:
    """The route's URL with each path parameter made hostile: a huge id for an int, NUL and a very long
    text for a str (the middleware and the converters must answer 4xx, never 5xx)."""
    path, _ = _split(url)
    for spec in (s.partition(">")[0] for s in route.pattern.split("<")[1:]):
        converter, _, name = spec.rpartition(":")
        values = [HUGE_ID] if converter == "int" else ["%00", "x" * 2000, "%ED%A0%80"]
        kwargs = {}
        try:
            kwargs = dict(resolve(path).kwargs)
        except Resolver404:
            return
        for value in values:
            filled = _fill(route.pattern, {**{k: str(v) for k, v in kwargs.items()}, name: value})
            if filled:
                yield f"{name}={value[:12]}", filled


def _run(routes: list[Route], fuzz: Fuzz) -> None:
    roles = list(ROLES)
    for route_index, route in enumerate(routes):
        params = _params_of(route.callback)
        openers: list[str] = []
        # 1. every URL of the route × every role: once plain, once with every parameter hostile (the value
        #    rotates over roles and routes)
        for url in route.urls[:3]:
            path, base = _split(url)
            names = sorted(params.get | {k for k, _ in base})
            for role_index, role in enumerate(roles):
                status = fuzz.send(role, "get", path, _encode(base), label="plain", hostile=False)
                if status is not None and status < 400 and role != ANON and role not in openers:
                    openers.append(role)
                if names and not route.admin:
                    label, value = HOSTILE[(route_index + role_index) % len(HOSTILE)]
                    query = _encode([(n, value) for n in names])
                    fuzz.send(role, "get", path, query, label=f"all params {label}", route=route.name)
        if route.admin or not route.urls:
            continue
        openers = openers or [r for r in route.get_roles if r != ANON] or ["admin"]
        path, base = _split(route.urls[0])
        # 2. each query parameter × each hostile value, as the roles that open the page (rotating)
        names = sorted(params.get | {k for k, _ in base})
        for name_index, name in enumerate(names):
            for value_index, (label, value) in enumerate(_values_for(name_index, len(names))):
                fuzz.send(
                    _rotate(openers, name_index + value_index),
                    "get",
                    path,
                    _encode(_with(base, name, value)),
                    label=f"{name}={label}",
                    route=route.name,
                    param=name,
                )
        # 3. each form field × each hostile value, from the matrix's valid body when there is one, as the
        #    roles the matrix lets post it (else an admin)
        if params.post or route.post_bodies:
            body, allowed = route.post_bodies[0] if route.post_bodies else ({}, ["admin"])
            form = _form_pairs(body)
            fields = sorted(params.post | {k for k, _ in form})
            for name_index, name in enumerate(fields):
                for value_index, (label, value) in enumerate(_values_for(name_index, len(fields))):
                    fuzz.send(
                        _rotate(allowed, name_index + value_index),
                        "post",
                        path,
                        _encode(base),
                        _encode(_with(form, name, value)),
                        label=f"form {name}={label}",
                        route=route.name,
                        param=name,
                    )
        # 4. each path parameter made hostile, as an admin, anonymous and a user with no role
        for index, (label, hostile_path) in enumerate(_hostile_path(route, route.urls[0])):
            fuzz.send(_rotate(["admin", ANON, NOROLE], index), "get", hostile_path, label=f"path {label}")


# --- the test ---------------------------------------------------------------------------------------------


@pytest.fixture
def quiet() -> Iterator[None]:
    """No log line per refused request (thousands): a failure reports its own traceback."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture
def fuzz(users) -> Fuzz:
    clients, cookies = {}, {}
    for role in ROLES:
        client = Client()
        if users[role] is not None:
            client.force_login(users[role])
        clients[role] = client
        cookies[role] = copy.deepcopy(client.cookies)
    return Fuzz(clients, cookies)


def test_no_html_view_answers_a_hostile_value_with_a_server_error(no_network, quiet, world, fuzz):
    routes = _routes()
    _attach_matrix_urls(routes, world)
    assert len(routes) > 50
    reached = [r for r in routes if r.urls]
    started = time.monotonic()
    _run(reached, fuzz)
    elapsed = time.monotonic() - started
    unreached = sorted(r.pattern for r in routes if not r.urls)
    read = [_params_of(r.callback) for r in reached if not r.admin]
    print(
        f"\nHTML fuzz: {len(reached)} routes × {len(ROLES)} roles, {sum(len(p.get) for p in read)} query "
        f"parameters and {sum(len(p.post) for p in read)} form fields read; {fuzz.hostile} hostile requests "
        f"({fuzz.sent} in all) in {elapsed:.1f} s; statuses {dict(sorted(fuzz.statuses.items()))}; "
        f"routes without a URL: {unreached}"
    )
    for (route, param), failure in fuzz.known.items():
        print(f"KNOWN 5xx (another change's to fix): {route} {param}: {KNOWN[route, param]}\n  {failure}")
    assert not fuzz.failures, (
        f"{len(fuzz.failures)} server errors of {fuzz.sent} requests:\n\n" + "\n\n".join(fuzz.failures[:60])
    )
    assert not unreached
    # the source scan finds what the views read (a scan that found nothing would fuzz nothing)
    assert sum(len(p.get) for p in read) >= 30 and sum(len(p.post) for p in read) >= 80
    assert fuzz.hostile > 1800
    assert 200 in fuzz.statuses and 400 in fuzz.statuses


def test_the_view_sources_give_the_parameters_they_read():
    """The scan finds the parameters of a plain view, of a view that loops over names, and of a form."""
    by_name = {r.name: r for r in _routes()}
    probes = _params_of(by_name["probes:probe_list"].callback)
    assert {"interface", "state", "split", "parent", "page"} <= probes.get
    launch = _params_of(by_name["evaluation:run_list"].callback)
    assert {"models", "conditions", "limit", "interface", "budget_usd"} <= launch.post
    preview = _params_of(by_name["evaluation:run_preview"].callback)
    assert {"limit", "interface", "release"} <= preview.get
    assert {"q"} <= _params_of(by_name["annotation:source_queue"].callback).get
    assert {"context"} <= _params_of(by_name["review:agreement"].callback).get
    assert {"username", "password"} <= _params_of(by_name["login"].callback).post
