"""Matrix rows for the release datasheet's downloads (the release page that shows it is a row of probes_cases):
admins only, like the release page; anonymous visitors go to the login page. The release is the one
probes_cases.populate exports (``world.release_id``)."""

from __future__ import annotations

from typing import Any

from tests.endpoint_matrix import ADM, ANON, Case, World, only, statuses

ADMIN_PAGES = {**only({ADM: 200}), ANON: 302}
MISSING = {**only({ADM: 404}), ANON: 302}

CASES: list[Case] = [
    *(
        Case(
            f"release datasheet {fmt}",
            "get",
            lambda w, fmt=fmt: f"/releases/{w.release_id}/datasheet.{fmt}",
            expected=ADMIN_PAGES,
            fmt=None,
        )
        for fmt in ("csv", "json")
    ),
    Case(
        "release datasheet of no such release",
        "get",
        "/releases/NREL-no-such-release/datasheet.csv",
        expected=MISSING,
        fmt=None,
    ),
    Case(
        "release datasheet POST",
        "post",
        lambda w: f"/releases/{w.release_id}/datasheet.csv",
        expected=statuses(405),
        fmt=None,
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    """Nothing of its own: the rows use the release probes_cases exports."""
