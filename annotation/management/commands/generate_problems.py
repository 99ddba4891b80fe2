from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.demo import generate_workspace


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
        step = max(1, count // 20)

        def progress(done: int, total: int) -> None:
            if total >= 100 and (done % step == 0 or done == total):
                self.stdout.write(f"  {done}/{total} problems", ending="\r" if done < total else "\n")
                self.stdout.flush()

        summary = generate_workspace(out, count=count, seed=seed, namespace=namespace, progress=progress)
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
