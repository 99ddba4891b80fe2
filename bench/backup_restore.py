"""Backup and restore at the paper's scale: time and size of ``manage.py backup`` and ``manage.py restore``.

Run from the project root::

    .venv/bin/python bench/backup_restore.py --keep-db bench_paper   # reuse (or build once) the 986-parent campaign
    .venv/bin/python bench/backup_restore.py --smoke                 # 10 parents: checks it runs

The database is ``bench/paper_scale.py``'s campaign (986 generated parents imported and compiled, every
development parent reviewed blind-first, a 76,000-request simulated evaluation run), built with the app's own
services when the sandbox database is empty, plus one unsigned development release export (its folder is part
of a backup). Then:

1. ``backup_create`` in this process (what ``manage.py backup`` runs): wall time, the database and media parts,
   the dump's size and the media's files and bytes;
2. ``manage.py restore`` in a fresh process into a second, new ``bench_*`` database and an empty media root
   (dropped and removed at exit): wall time, and each part's time as the command reports it;
3. a check that every table has the same row count in both databases.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._sandbox import _postgres_claim, _postgres_drop, add_sandbox_arguments, open_sandbox  # noqa: E402


def _release() -> str:
    """One unsigned export of the development split (kept in the sandbox's media like a team's release)."""
    from django.conf import settings

    from probes.models import Release
    from probes.releases import release_export

    if (release := Release.objects.order_by("pk").first()) is not None:
        return release.release_id
    started = time.perf_counter()
    output = Path(settings.MEDIA_ROOT) / "releases" / "bench-development"
    release = release_export(split="development", output=output, actor=None)
    print(f"building: release {release.release_id[:17]}… exported in {time.perf_counter() - started:.0f} s")
    return release.release_id


def _table_counts(database_url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        tables = [t for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in sorted(tables)}


def _restore(folder: Path, database_url: str, media_root: Path, var_dir: Path) -> tuple[float, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "PHYSALIGN_MEDIA_ROOT": str(media_root)}
    env["PHYSALIGN_VAR_DIR"] = str(var_dir)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "restore", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"restore failed:\n{done.stdout}\n{done.stderr}")
    return wall, done.stdout.strip()


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--json", help="also write the measurements to this file")
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.database != "postgres":
        raise SystemExit("this benchmark measures pg_dump and pg_restore: --database postgres")
    if args.smoke:
        args.count = 30  # the smallest size that still has a development release
    box = open_sandbox("backup", args)
    box.start_django()
    from bench.paper_scale import build

    built = build(args)
    release_id = _release()
    from annotation.models import ParentProblem
    from home.backups import backup_create
    from probes.models import Probe, RenderedView

    print(
        f"database: {ParentProblem.objects.count():,} parents, {Probe.objects.count():,} probes, "
        f"{RenderedView.objects.count():,} rendered views, release {release_id[:17]}…"
        + (f" (built: {', '.join(f'{k} {v:,.0f}' for k, v in built.items())})" if built else "")
    )

    folder = box.root / "backup"
    started = time.perf_counter()
    result = backup_create(output=folder)
    backup_s = time.perf_counter() - started
    manifest = result.manifest
    dump = next(e for e in manifest.files if e.kind == "database")
    media = [e for e in manifest.files if e.kind == "media"]
    releases = [e for e in manifest.files if e.kind == "release"]

    restore_name = f"bench_backup_restore_{os.getpid()}"
    assert box.postgres_server is not None
    _postgres_claim(box.postgres_server, restore_name)
    atexit.register(_postgres_drop, box.postgres_server, restore_name)
    restore_url = f"{box.postgres_server}/{restore_name}"
    restore_s, restore_out = _restore(
        folder, restore_url, box.root / "restored-media", box.root / "restored-var"
    )
    equal = _table_counts(restore_url) == _table_counts(box.database_url)

    rows = sum(manifest.counts.values())
    print(f"\n{'item':52} {'value':>22}")
    print(f"{'rows (all tables)':52} {rows:>22,}")
    print(f"{'backup: wall time (in process)':52} {backup_s:>20.1f} s")
    print(f"{'  … pg_dump (snapshot, counts, references)':52} {manifest.seconds['database_s']:>20.1f} s")
    print(f"{'  … media copy (storage API, 8 threads)':52} {manifest.seconds['media_s']:>20.1f} s")
    print(f"{'  … database dump (custom format)':52} {dump.size / 1e6:>19.1f} MB")
    print(f"{'  … stored files':52} {len(media):>13,} files, {sum(e.size for e in media) / 1e6:>6.0f} MB")
    print(
        f"{'  … release files':52} {len(releases):>13,} files, {sum(e.size for e in releases) / 1e6:>6.0f} MB"
    )
    print(f"{'  … backup folder on disk':52} {_du(folder) / 1e6:>19.1f} MB")
    print(f"{'restore: wall time (manage.py restore, fresh process)':52} {restore_s:>20.1f} s")
    print(f"{'row counts equal in every table after restore':52} {str(equal):>22}")
    print(f"\nmanage.py restore said: {restore_out}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "backup_s": backup_s,
                    "backup_parts": manifest.seconds,
                    "dump_bytes": dump.size,
                    "media_files": len(media),
                    "media_bytes": sum(e.size for e in media),
                    "release_files": len(releases),
                    "release_bytes": sum(e.size for e in releases),
                    "restore_s": restore_s,
                    "restore_output": restore_out,
                    "counts_equal": equal,
                },
                indent=1,
            )
        )
    if not equal:
        raise SystemExit("row counts differ after the restore")


if __name__ == "__main__":
    main()
