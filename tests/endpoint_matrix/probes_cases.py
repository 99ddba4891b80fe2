"""Matrix rows for compile runs, probes and releases (pages and REST).

Scorer = the admin role plus ``probes.view_private_mapping`` (the matrix's key holder); the matrix admin lacks
it, so it reads probes and releases without their private fields.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from probes.models import Probe
from probes.releases import release_export
from probes.services import compile_run_create, compile_run_execute, probe_record_review
from tests.endpoint_matrix import ADM, ANON, KEY, Case, World, only, statuses
from tests.probes import kit_demo

ADMIN_PAGES = {**only({ADM: 200}), ANON: 302}
ADMIN_API = only({ADM: 200})
API_CLIENTS = statuses(200, anonymous=403, no_role=403)  # the public part: users with a role
MISSING_FOR_CLIENTS = statuses(404, anonymous=403, no_role=403)

CASES: list[Case] = [
    Case("compile runs page", "get", "/compile/", expected=ADMIN_PAGES, fmt=None),
    Case("compile run page", "get", lambda w: f"/compile/{w.run_id}/", expected=ADMIN_PAGES, fmt=None),
    Case("probe browser", "get", "/probes/?interface=T03-image", expected=ADMIN_PAGES, fmt=None),
    Case(
        "probe page",
        "get",
        lambda w: f"/probes/{kit_demo.T02}/?condition=gold",
        expected=ADMIN_PAGES,
        fmt=None,
        secrets=lambda w: [kit_demo.PE_BLOCK_A[:20]],  # the page shows entity ids cut at 20 characters
    ),
    Case(
        "probe attachment",
        "get",
        lambda w: f"/probes/{kit_demo.T02}/attachments/V1",
        expected=ADMIN_PAGES,
        fmt=None,
    ),
    Case("releases page", "get", "/releases/", expected=ADMIN_PAGES, fmt=None),
    Case("compile runs api", "get", "/api/compile-runs/", expected=ADMIN_API),
    Case("compile run api", "get", lambda w: f"/api/compile-runs/{w.run_id}/", expected=ADMIN_API),
    Case("compile run api missing", "get", "/api/compile-runs/999999/", expected=only({ADM: 404})),
    Case(
        "compile runs api, a bad cursor",
        "get",
        "/api/compile-runs/?cursor=not-a-cursor",
        expected=only({ADM: 404}),
    ),
    Case(
        "compile run launch bad body",
        "post",
        "/api/compile-runs/",
        {"all": False},
        expected={**only({ADM: 400})},
    ),
    Case("probes api", "get", "/api/probes/", expected=ADMIN_API),
    Case(
        "probes api chosen fields",
        "get",
        "/api/probes/?fields=logical_probe_id,raw_messages",
        expected=ADMIN_API,
    ),
    Case(
        "probes api unknown field",
        "get",
        "/api/probes/?fields=interface,private",
        expected={**only({ADM: 400})},
    ),
    Case(
        "probe api",
        "get",
        lambda w: f"/api/probes/{kit_demo.T02}/",
        expected=ADMIN_API,
        secrets=lambda w: [kit_demo.PE_BLOCK_A],
    ),
    Case("probe api missing", "get", "/api/probes/PAQ-no-such-probe/", expected=only({ADM: 404})),
    Case("probes api, a bad cursor", "get", "/api/probes/?cursor=not-a-cursor", expected=only({ADM: 404})),
    Case("releases api", "get", "/api/releases/", expected=API_CLIENTS),
    Case(
        "releases api, a bad cursor",
        "get",
        "/api/releases/?cursor=not-a-cursor",
        expected=MISSING_FOR_CLIENTS,
    ),
    Case("release api", "get", lambda w: f"/api/releases/{w.release_id}/", expected=API_CLIENTS),
    Case("release api missing", "get", "/api/releases/no-such-release/", expected=MISSING_FOR_CLIENTS),
    Case(
        "release public probes of no such release",
        "get",
        "/api/releases/no-such-release/probes/",
        expected=MISSING_FOR_CLIENTS,
    ),
    Case(
        "release private mappings of no such release",
        "get",
        "/api/releases/no-such-release/private/",
        expected=only({KEY: 404}),
    ),
    Case(
        "release private mappings, a bad cursor",
        "get",
        lambda w: f"/api/releases/{w.release_id}/private/?cursor=not-a-cursor",
        expected=only({KEY: 404}),
    ),
    Case(
        "release zip of no such release",
        "post",
        "/api/releases/no-such-release/zip/",
        expected=only({ADM: 404}),
    ),
    Case(
        "release public probes",
        "get",
        lambda w: f"/api/releases/{w.release_id}/probes/?condition=gold",
        expected=API_CLIENTS,
    ),
    Case(
        "release public probes, a cursor page",
        "get",
        lambda w: f"/api/releases/{w.release_id}/probes/?page_size=1&cursor=cD1QQVEt",
        expected=API_CLIENTS,
    ),
    Case(
        "release public probes, a bad cursor",
        "get",
        lambda w: f"/api/releases/{w.release_id}/probes/?cursor=not-a-cursor",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    Case(
        "release private mappings",
        "get",
        lambda w: f"/api/releases/{w.release_id}/private/",
        expected=only({KEY: 200}),
        secrets=lambda w: [kit_demo.PE_BLOCK_A],
    ),
    Case("release page", "get", lambda w: f"/releases/{w.release_id}/", expected=ADMIN_PAGES, fmt=None),
    Case(
        "release page download before the zip is built",
        "get",
        lambda w: f"/releases/{w.release_id}/download/",
        expected={**only({ADM: 404}), ANON: 302},
        fmt=None,
    ),
    Case(
        "release page prepares the zip",
        "post",
        lambda w: f"/releases/{w.release_id}/zip/",
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "release page: the Hugging Face export download before it is built",
        "get",
        lambda w: f"/releases/{w.release_id}/hf/download/",
        expected={**only({ADM: 404}), ANON: 302},
        fmt=None,
    ),
    Case(
        "release page builds the Hugging Face export",
        "post",
        lambda w: f"/releases/{w.release_id}/hf/",
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "release zip not built",
        "get",
        lambda w: f"/api/releases/{w.release_id}/zip/",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    from tests.probes.conftest import make_demo_parent

    make_demo_parent(type(users[ADM]), problem_id="SYNTHETIC_TEST_ONLY")
    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    for probe in Probe.objects.all():
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )
    release = release_export(split="development", output=Path(tempfile.mkdtemp()) / "release", actor=None)
    world.run_id = run.pk
    world.release_id = release.release_id
