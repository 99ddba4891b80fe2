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
    Case("releases api", "get", "/api/releases/", expected=API_CLIENTS),
    Case("release api", "get", lambda w: f"/api/releases/{w.release_id}/", expected=API_CLIENTS),
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
