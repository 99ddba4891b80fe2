"""Matrix rows for the physics rules: the page, its admin toggle, and the rules API (read; admins change)."""

from __future__ import annotations

from typing import Any

from annotation.physics.checks import load_rules
from tests.endpoint_matrix import ADJ, ADM, ANN, ANON, NOROLE, PRB, SRC, Case, World, only, statuses

# whoever may view problems reads the rules (the workspace's warnings refer to them); admins change them
RULE_PAGE_READERS = {ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403}
RULE_API_READERS = statuses(200, anonymous=403, no_role=403)

CASES: list[Case] = [
    Case("physics rules page", "get", "/physics-rules/", expected=RULE_PAGE_READERS, fmt=None),
    Case(
        "physics rules page toggle",
        "post",
        "/physics-rules/",
        lambda w: {"code": w.physics_rule_code, "blocking": "1"},
        expected=only({ADM: 302, ANON: 302}),  # the admin back to the page; anonymous to the login page
        fmt="multipart",
    ),
    Case(
        "physics rules page toggle of an unknown rule",
        "post",
        "/physics-rules/",
        {"code": "PHYS_NO_SUCH_RULE", "blocking": "1"},
        expected=only({ADM: 302, ANON: 302}),  # refused with a message on the page, nothing changes
        fmt="multipart",
    ),
    Case("physics rules api list", "get", "/api/physics-rules/", expected=RULE_API_READERS),
    Case(
        "physics rules api detail",
        "get",
        lambda w: f"/api/physics-rules/{w.physics_rule_code}/",
        expected=RULE_API_READERS,
    ),
    Case(
        "physics rules api detail of an unknown rule",
        "get",
        "/api/physics-rules/PHYS_NO_SUCH_RULE/",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    Case(
        "physics rules api make blocking",
        "patch",
        lambda w: f"/api/physics-rules/{w.physics_rule_code}/",
        {"blocking": True},
        expected=only({ADM: 200}),
    ),
    Case(
        "physics rules api bad body",
        "patch",
        lambda w: f"/api/physics-rules/{w.physics_rule_code}/",
        {"blocking": "sometimes"},
        expected=only({ADM: 400}),
    ),
    Case(
        "physics rules api unknown rule",
        "patch",
        "/api/physics-rules/PHYS_NO_SUCH_RULE/",
        {"blocking": True},
        expected=only({ADM: 404}),
    ),
    Case(
        "physics rules api list is read-only",
        "post",
        "/api/physics-rules/",
        {"blocking": True},
        expected=only({ADM: 405}),
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    world.physics_rule_code = load_rules().rules[0].code
