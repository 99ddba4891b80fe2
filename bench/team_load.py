"""A whole team at once: annotators autosaving, reviewers answering blind, an admin on the dashboards.

Run from the project root::

    .venv/bin/python bench/team_load.py                        # PostgreSQL, 16 annotators; then SQLite, 8
    .venv/bin/python bench/team_load.py --database sqlite      # the embedded default only
    .venv/bin/python bench/team_load.py --smoke                # a few seconds: checks it runs

The app is served as ``make run`` serves it: gunicorn (``--workers 2 --threads 4``), ``DJANGO_DEBUG=0``, on
the benchmark's own database (``bench/_sandbox.py``; never the app's). Loopback only, bounded in time
(``--duration`` seconds of load after everybody has logged in). Every user logs in through the login form
and works with the session cookie and the CSRF header, as the browser does:

- each annotator (``--annotators``, default 16; 8 on SQLite) is assigned one problem under strict
  assignment and autosaves its Pass 1 with ``PUT /api/parents/<id>/passes/1/`` and ``If-Match`` every
  ``--interval`` seconds (0.2, start to start: 5 saves/s each while replies come within it), a region nudged
  each time, and opens the workspace page every fifth save;
- each reviewer (``--reviewers``, 2) claims a review slot over the API, reads each public probe, answers it
  blind, reveals the target and records a decision, then claims the next slot, reading the review queue
  page between slots;
- an admin reads the pipeline board, the runs and the probe and release lists in turn.

It prints requests/s over the load window, p50/p95/p99 per kind of request (save, page, API read, review
write), the errors by status, and checks that every acknowledged save is what the database holds: each
annotator's last acknowledged save counter and document hash must be the stored ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from httpx import RemoteProtocolError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fixtures import ensure_probes, stop_processes  # noqa: E402
from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402
from bench.eval_throughput import _cpu_seconds  # noqa: E402

PASSWORD = "team-load-bench"  # noqa: S105 — a throwaway sandbox's users
GOALS = {  # issue 32 §1, on 2 cores
    "postgres": {"rps": 80.0, "save_p95_ms": 150.0, "page_p95_ms": 300.0},
    "sqlite": {"save_p95_ms": 300.0},
}
SERVED_AS_MAKE_RUN = {  # DEBUG off as `make run`; plain HTTP on loopback
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "team-load-bench-secret-not-for-production",
    "DJANGO_SECURE_SSL": "false",
}
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass
class Annotator:
    username: str
    problem_id: str
    document: dict[str, Any]
    version: int
    acknowledged: tuple[int, str] | None = None  # (save counter, document hash) of the last 200


@dataclass
class Fixture:
    annotators: list[Annotator]
    reviewers: list[str]
    admin: str
    answers: dict[str, dict[str, Any]]  # logical probe id → the blind answer (gold binding and reads)


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    started: float = 0.0
    ended: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds over the window, by process kind

    def record(self, kind: str, started: float, status: int | str, ok: bool) -> None:
        self.latencies[kind].append((time.perf_counter() - started) * 1000)
        if not ok:
            self.errors[f"{kind} {status}"] += 1


def _seed(args: argparse.Namespace) -> Fixture:
    """Users with their roles, one strictly assigned problem per annotator, and compiled probes to review."""
    import tempfile

    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group

    from annotation.assignments.services import assignment_assign
    from annotation.demo import generate_workspace
    from annotation.importers import import_kit_workspace
    from annotation.models import ParentProblem, PassDocument
    from probes.models import Probe

    ensure_probes(args.probes, seed=4242)
    probe_parents = set(ParentProblem.objects.values_list("pk", flat=True))
    with tempfile.TemporaryDirectory() as tmp:
        generate_workspace(Path(tmp) / "ws", count=args.annotators, seed=9100)
        import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
    parents = list(
        ParentProblem.objects.exclude(pk__in=probe_parents).select_related("source").order_by("problem_id")
    )

    User = get_user_model()
    hashed = make_password(PASSWORD)

    def user(name: str, *roles: str) -> Any:
        row, _ = User.objects.get_or_create(username=name, defaults={"password": hashed})
        row.groups.add(*[Group.objects.get(name=r) for r in roles])
        return row

    admin = user("load_admin", "admin")
    annotators = [user(f"load_annotator{i:02d}", "annotator") for i in range(args.annotators)]
    reviewers = [user(f"load_reviewer{i}", "probe_reviewer") for i in range(args.reviewers)]
    assignment_assign(parent_ids=[p.pk for p in parents], role="annotator", users=annotators, actor=admin)
    for source in {p.source for p in parents}:
        source.assignment_strict = True
        source.save(update_fields=["assignment_strict"])
    docs = {d.parent_id: d for d in PassDocument.objects.filter(parent__in=parents, pass_no=1)}
    fixture_annotators = [
        Annotator(u.get_username(), p.problem_id, docs[p.pk].document, docs[p.pk].version)
        for p, u in zip(parents, annotators, strict=True)
    ]
    answers = {
        p.logical_probe_id: {
            "binding": p.key.gold_aliases,
            "read": {r["anchor_alias"]: r["expected"] for r in p.key.key["read_targets"]},
        }
        for p in Probe.objects.select_related("key").filter(state="pending_review")
    }
    return Fixture(fixture_annotators, [r.get_username() for r in reviewers], admin.get_username(), answers)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(args: argparse.Namespace, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, **SERVED_AS_MAKE_RUN, "LOG_LEVEL": "WARNING"}
    command = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "physalign_site.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(args.workers),
        "--threads",
        str(args.threads),
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start listening within 60 s")


async def _login(client: Any, username: str) -> None:
    page = await client.get("/accounts/login/")
    token = CSRF_INPUT.search(page.text)
    if page.status_code != 200 or token is None:
        raise SystemExit(f"login page for {username}: {page.status_code}")
    response = await client.post(
        "/accounts/login/",
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
    )
    if response.status_code != 302:
        raise SystemExit(f"{username} could not log in: {response.status_code}")
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]


async def _timed(client: Any, tally: Tally, kind: str, method: str, url: str, **kwargs: Any) -> Any:
    started = time.perf_counter()
    try:
        try:
            response = await client.request(method, url, **kwargs)
        except RemoteProtocolError:
            if method != "GET":
                raise
            # gunicorn closes a keep-alive connection idle for 2 s; a browser resends an idempotent request
            # that met a connection closed under it, and so does this client (counted apart)
            tally.errors["(GET resent on a closed keep-alive connection)"] += 1
            response = await client.request(method, url, **kwargs)
    except Exception as error:  # noqa: BLE001 — a dropped connection is a figure, not a crash
        tally.record(kind, started, type(error).__name__, ok=False)
        return None
    tally.record(kind, started, response.status_code, ok=response.status_code < 400)
    if response.status_code >= 400 and os.environ.get("TEAM_LOAD_DEBUG"):
        print(method, url, response.status_code, response.text[:300])
    return response


async def _annotator(client: Any, me: Annotator, args: argparse.Namespace, stop: float, tally: Tally) -> None:
    from kit.canonical import digest

    url = f"/api/parents/{me.problem_id}/passes/1/"
    saves = 0
    due = time.perf_counter()
    while time.perf_counter() < stop:
        due += (
            args.interval
        )  # the autosave timer: every interval from the last save's start, not after its reply
        document = json.loads(json.dumps(me.document))
        node = document["visual_nodes"][0]
        node["bbox_1000"][0] = 10 + saves % 20  # the annotator nudges a region
        response = await _timed(
            client,
            tally,
            "save",
            "PUT",
            url,
            json={"document": document},
            headers={"If-Match": f'"{me.version}"'},
        )
        if response is not None and response.status_code == 200:
            body = response.json()
            me.version = body["version"]
            me.document = document
            me.acknowledged = (body["version"], digest(document))
        elif (
            response is not None and response.status_code == 409
        ):  # somebody else saved: reload, as the page does
            current = await _timed(client, tally, "api_read", "GET", url)
            if current is not None and current.status_code == 200:
                me.version = current.json()["version"]
        saves += 1
        if saves % 5 == 0:
            await _timed(client, tally, "page", "GET", f"/problems/{me.problem_id}/passes/1/")
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        due = max(due, time.perf_counter())  # a late reply shifts the next saves; it never bunches them up


async def _reviewer(
    client: Any, answers: dict[str, dict[str, Any]], stop: float, tally: Tally, role: str
) -> None:
    while time.perf_counter() < stop:
        await _timed(client, tally, "page", "GET", "/review/")
        claim = await _timed(
            client,
            tally,
            "review_write",
            "POST",
            "/api/review/queue/",
            json={"role": role, "context": "development"},
        )
        if claim is None or claim.status_code != 201:
            await asyncio.sleep(1.0)  # nothing left to claim (or refused): look again later
            continue
        slot = claim.json()["id"]
        detail = await _timed(client, tally, "api_read", "GET", f"/api/review/slots/{slot}/")
        probes = [p["logical_probe_id"] for p in detail.json()["probes"]] if detail is not None else []
        for pid in probes:  # strict blind order: every probe of the slot answered blind before any target
            base = f"/api/review/slots/{slot}/probes/{pid}/"
            await _timed(client, tally, "api_read", "GET", base)
            await _timed(client, tally, "review_write", "POST", base + "blind/", json=answers[pid])
            await asyncio.sleep(0.5)  # a reviewer reads before answering the next probe
        for pid in probes:
            base = f"/api/review/slots/{slot}/probes/{pid}/"
            target = await _timed(client, tally, "api_read", "GET", base + "target/")
            if target is None or target.status_code != 200:
                continue
            empty = not target.json()["packet_plan"]["observation_ids"]
            decision = {
                "status": "approved",
                "severity": "none",
                "confirmations": dict.fromkeys(_confirmation_keys(), True),
                "packet_state": "approved_empty" if empty else "approved_nonempty",
                "packet_empty_reason": "no_independent_readable_primitive" if empty else "",
            }
            await _timed(client, tally, "review_write", "POST", base + "decision/", json=decision)
            await asyncio.sleep(0.5)
        if time.perf_counter() >= stop:
            return


def _confirmation_keys() -> tuple[str, ...]:
    from review.models import CONFIRMATION_KEYS

    return tuple(CONFIRMATION_KEYS)


async def _admin(client: Any, stop: float, tally: Tally) -> None:
    pages = ["/", "/runs/", "/probes/", "/releases/", "/compile/"]
    turn = 0
    while time.perf_counter() < stop:
        await _timed(client, tally, "page", "GET", pages[turn % len(pages)])
        turn += 1
        await asyncio.sleep(0.5)


async def _load(fixture: Fixture, args: argparse.Namespace, port: int) -> Tally:
    import httpx

    tally = Tally()
    limits = httpx.Limits(max_connections=2, max_keepalive_connections=2)
    clients = []

    def client() -> Any:
        c = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30.0, limits=limits)
        clients.append(c)
        return c

    annotator_clients = [client() for _ in fixture.annotators]
    reviewer_clients = [client() for _ in fixture.reviewers]
    admin_client = client()
    await asyncio.gather(
        *(_login(c, a.username) for c, a in zip(annotator_clients, fixture.annotators, strict=True)),
        *(_login(c, r) for c, r in zip(reviewer_clients, fixture.reviewers, strict=True)),
        _login(admin_client, fixture.admin),
    )
    warm = (
        Tally()
    )  # one untimed round first: a worker's first request of each kind loads what it lazily imports
    await asyncio.gather(
        *(
            _annotator(c, a, args, time.perf_counter() + 0.01, warm)
            for c, a in zip(annotator_clients, fixture.annotators, strict=True)
        )
    )
    tally.started = time.perf_counter()
    cpu_before = _cpu_by_kind()
    stop = tally.started + args.duration
    roles = ["primary", "secondary"]
    await asyncio.gather(
        *(
            _annotator(c, a, args, stop, tally)
            for c, a in zip(annotator_clients, fixture.annotators, strict=True)
        ),
        *(_reviewer(c, fixture.answers, stop, tally, roles[i % 2]) for i, c in enumerate(reviewer_clients)),
        _admin(admin_client, stop, tally),
    )
    tally.ended = time.perf_counter()
    tally.cpu = {kind: after - cpu_before[kind] for kind, after in _cpu_by_kind().items()}
    await asyncio.gather(*(c.aclose() for c in clients))
    return tally


def _cpu_by_kind() -> dict[str, float]:
    """CPU seconds so far of the app server, of PostgreSQL and of this load generator (same 2 cores)."""
    return {
        "gunicorn": _cpu_seconds(lambda c: "gunicorn" in c and "physalign_site.wsgi" in c),
        "postgres": _cpu_seconds(
            lambda c: c.startswith("postgres:") or c.split(" ", 1)[0].endswith("/postgres")
        ),
        "load generator": time.process_time(),
    }


def _lost_saves(fixture: Fixture) -> list[str]:
    """Annotators whose last acknowledged save is not what the database holds."""
    from annotation.models import PassDocument

    stored = {
        d.parent.problem_id: (d.version, d.document_sha256)
        for d in PassDocument.objects.select_related("parent").filter(
            parent__problem_id__in=[a.problem_id for a in fixture.annotators], pass_no=1
        )
    }
    return [
        a.username
        for a in fixture.annotators
        if a.acknowledged is not None and stored.get(a.problem_id) != a.acknowledged
    ]


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _report(
    args: argparse.Namespace, fixture: Fixture, tally: Tally, lost: list[str], server_log: Path
) -> dict[str, Any]:
    window = tally.ended - tally.started
    total = sum(len(v) for v in tally.latencies.values())
    rps = total / window if window else 0.0
    print(
        f"\n{args.database}: {len(fixture.annotators)} annotators, {len(fixture.reviewers)} reviewers, 1 admin; "
        f"gunicorn {args.workers}×{args.threads}; {window:.1f} s of load"
    )
    print(f"  {total} requests, {rps:.1f} requests/s")
    print(f"  {'kind':<13}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    figures: dict[str, Any] = {"rps": rps}
    for kind in ("save", "page", "api_read", "review_write"):
        values = tally.latencies.get(kind, [])
        p50, p95, p99 = (_percentile(values, q) for q in (50, 95, 99))
        figures[f"{kind}_p95_ms"] = p95
        print(f"  {kind:<13}{len(values):>7}{p50:>9.1f}{p95:>9.1f}{p99:>9.1f}")
    cpu = ", ".join(f"{kind} {seconds / window:.2f}" for kind, seconds in tally.cpu.items())
    print(f"  CPU cores busy over the window: {cpu} (of {os.cpu_count()})")
    errors = ", ".join(f"{k}: {v}" for k, v in sorted(tally.errors.items())) or "none"
    print(f"  errors by status: {errors}")
    locked = server_log.read_text(errors="replace").count("database is locked")
    print(f"  'database is locked' in the server log: {locked}")
    acknowledged = sum(1 for a in fixture.annotators if a.acknowledged is not None)
    print(
        f"  acknowledged saves stored: {acknowledged - len(lost)}/{acknowledged} annotators' last saves"
        + (f" — LOST: {', '.join(lost)}" if lost else "")
    )
    goals = GOALS[args.database]
    verdicts = []
    if "rps" in goals:
        verdicts.append(f"≥ {goals['rps']:.0f} requests/s: {'met' if rps >= goals['rps'] else 'NOT met'}")
    for key in ("save_p95_ms", "page_p95_ms"):
        if key in goals:
            met = figures[key] < goals[key]
            verdicts.append(f"p95 {key.split('_')[0]} < {goals[key]:.0f} ms: {'met' if met else 'NOT met'}")
    print("  goals: " + "; ".join(verdicts))
    figures.update(errors=dict(tally.errors), lost=lost, locked=locked)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=None, help="default 16 (PostgreSQL), 8 (SQLite)")
    parser.add_argument("--reviewers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load after the logins")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between one annotator's saves")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--probes", type=int, default=60, help="compiled probes for the reviewers")
    parser.add_argument(
        "--only", action="store_true", help="only the --database given (by default PostgreSQL, then SQLite)"
    )
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    explicit_database = any(a == "--database" or a.startswith("--database=") for a in sys.argv[1:])
    if args.annotators is None:
        args.annotators = 16 if args.database == "postgres" else 8
    if args.smoke:
        args.annotators, args.reviewers, args.duration, args.probes = min(args.annotators, 3), 1, 3.0, 8
    box = open_sandbox("team_load", args, debug=False)
    os.environ.update(SERVED_AS_MAKE_RUN)
    box.start_django()
    from django.core.management import call_command

    call_command(
        "collectstatic", interactive=False, verbosity=0
    )  # as `make run` does: DEBUG off needs the manifest
    logging.getLogger("httpx").setLevel(logging.WARNING)
    fixture = _seed(args)
    from django.db import connections

    connections.close_all()
    log = box.root / "gunicorn.log"
    port = _free_port()
    server = _start_server(args, port, log)
    try:
        tally = asyncio.run(_load(fixture, args, port))
    finally:
        stop_processes([server])
    _report(args, fixture, tally, _lost_saves(fixture), log)
    if args.database == "postgres" and not (args.only or explicit_database):
        box.close()
        command = [sys.executable, __file__, "--database", "sqlite", "--only"]
        command += [a for a in sys.argv[1:] if a != "--only"]
        if not any(a.startswith("--annotators") for a in sys.argv[1:]):
            command += ["--annotators", "8"]
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
