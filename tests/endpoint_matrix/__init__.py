"""The endpoint × role matrix: one table of every endpoint and page, checked for every role.

Each area adds a module ``<area>_cases.py`` in this package with ``CASES`` (a list of ``Case``) and
``populate(world, users)``, which creates the objects its rows point at and stores their ids on the
shared ``world`` namespace. ``tests/test_endpoint_matrix.py`` collects every such module.
``url`` and ``body``/``headers`` may be callables of the world; a role left out of ``expected`` is
not checked for that row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

ANON, ANN, SRC, PRB, ADJ, ADM, NOROLE = (
    "anonymous",
    "annotator",
    "source_reviewer",
    "probe_reviewer",
    "adjudicator",
    "admin",
    "no_role",
)
ROLES = (ANON, ANN, SRC, PRB, ADJ, ADM, NOROLE)


def statuses(default: int, **overrides: int) -> dict[str, int]:
    """Every role → ``default``, except the overrides (``anonymous=403`` …)."""
    return {role: overrides.get(role, default) for role in ROLES}


def only(allowed: dict[str, int], *, others: int = 403) -> dict[str, int]:
    return {role: allowed.get(role, others) for role in ROLES}


class World(SimpleNamespace):
    """Ids of the objects the rows point at; each area's ``populate`` adds its own."""


@dataclass
class Case:
    name: str
    method: str
    url: Callable[[World], str] | str
    body: Callable[[World], Any] | Any = None
    expected: dict[str, int] = field(default_factory=dict)
    headers: Callable[[World], dict[str, str]] | dict[str, str] | None = None
    fmt: str | None = "json"


def value_of(value: Any, world: World) -> Any:
    return value(world) if callable(value) else value
