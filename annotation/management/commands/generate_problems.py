from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.demo import generate_workspace
from physalign_site.cli import progress


class Command(BaseCommand):
    help = (
        "Generate N procedural physics-diagram problems as a complete kit source workspace "
        "(manifest, images, approved Passes 1-4, review state, private answers). Deterministic in --seed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, required=True, help="number of parent problems")
        parser.add_argument(
            "--seed", type=int, required=True, help="same seed and count give byte-identical output"
        )
        parser.add_argument("--out", type=Path, required=True, help="output workspace directory")
        parser.add_argument("--namespace", default="physalign_demo", help="source_dataset of every problem")
        parser.add_argument(
            "--force",
            action="store_true",
            help="write into a non-empty directory (files are overwritten, other files are left alone)",
        )

    def handle(self, *args, count: int, seed: int, out: Path, namespace: str, force: bool, **options) -> None:
        if count < 1:
            raise CommandError("--count must be at least 1.")
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out} exists and is not a directory.")
        if out.is_dir() and any(out.iterdir()) and not force:
            raise CommandError(f"{out} is not empty; choose a new directory or pass --force.")
        # A few problems take no time: a display only from a hundred on.
        with progress(self, count, "Generating problems") if count >= 100 else nullcontext() as bar:
            shown = (lambda done, total: bar.update(done, total=total)) if bar else None
            summary = generate_workspace(out, count=count, seed=seed, namespace=namespace, progress=shown)
        families = ", ".join(f"{name} {n}" for name, n in summary.families.items())
        languages = ", ".join(f"{name} {n}" for name, n in summary.languages.items())
        self.stdout.write(f"families: {families}")
        self.stdout.write(f"languages: {languages}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote {summary.count} problems ({summary.files} files, {summary.bytes_written / 1e6:.1f} MB) "
                f"to {summary.out_dir} with seed {summary.seed}."
            )
        )
