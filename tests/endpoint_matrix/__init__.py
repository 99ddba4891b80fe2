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

ANON, ANN, SRC, PRB, ADJ, ADM, KEY, NOROLE = (
    "anonymous",
    "annotator",
    "source_reviewer",
    "probe_reviewer",
    "adjudicator",
    "admin",  # the admin role without the key-holder permission
    "key_holder",  # the admin role with probes.view_private_mapping: may know targets
    "no_role",
)
ROLES = (ANON, ANN, SRC, PRB, ADJ, ADM, KEY, NOROLE)


def expected_for(expected: dict[str, int], role: str) -> int | None:
    """A row's status for ``role``; the key holder is an admin, so unless the row names them they are
    expected to get what the admin gets."""
    if role == KEY and KEY not in expected:
        return expected.get(ADM)
    return expected.get(role)


def statuses(default: int, **overrides: int) -> dict[str, int]:
    """Every role → ``default``, except the overrides (``anonymous=403`` …)."""
    return {role: overrides.get(role, default) for role in ROLES if role != KEY or KEY in overrides}


def only(allowed: dict[str, int], *, others: int = 403) -> dict[str, int]:
    """The roles named → their status, every other role → ``others`` (the key holder → the admin's, unless
    named)."""
    return {role: allowed.get(role, others) for role in ROLES if role != KEY or KEY in allowed}


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
    # strings private to a probe (its targets): a 200 for any role but the key holder must not contain them,
    # and the key holder's 200 must (so the check cannot pass by accident)
    secrets: Callable[[World], list[str]] | None = None


def value_of(value: Any, world: World) -> Any:
    return value(world) if callable(value) else value
