"""manage.py export_hf --release ID --output DIR [--push-to-hub REPO] [--vlmevalkit DIR] [--lmms-eval DIR]: the
release's public part as a Hugging Face dataset (parquet shards with Image features, one config per condition and
interface, a dataset card), checked by the release leakage scan; optionally uploaded to the Hub with
huggingface_hub, and also written as VLMEvalKit TSVs and as an lmms-eval task folder."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from physalign_site.errors import ApplicationError
from probes.exports.hf import ExportLeak, export_hf, push_to_hub, release_sources
from probes.exports.lmms_eval import write_lmms_eval
from probes.exports.public import read_public
from probes.exports.vlmevalkit import write_vlmevalkit
from probes.models import Release
from probes.release_store import release_folder


class Command(BaseCommand):
    help = "Export a release's public part as a Hugging Face dataset folder (optionally push it to the Hub)."

    def add_arguments(self, parser):
        parser.add_argument("--release", required=True, help="release id (NREL-…)")
        parser.add_argument("--output", required=True, help="folder to write (replaced if it exists)")
        parser.add_argument("--push-to-hub", metavar="REPO", help="also upload to this Hub dataset repo")
        parser.add_argument(
            "--public", action="store_true", help="create the Hub repo public (default private)"
        )
        parser.add_argument(
            "--vlmevalkit", metavar="DIR", help="also write VLMEvalKit TSVs (one per condition)"
        )
        parser.add_argument("--lmms-eval", metavar="DIR", help="also write an lmms-eval task folder")

    def handle(self, *args, **options):
        release = Release.objects.filter(release_id=options["release"]).first()
        if release is None:
            raise CommandError(f"no release {options['release']}")
        try:
            root = release_folder(release)  # the folder, or its working copy from the media bucket
        except ApplicationError as error:
            raise CommandError(error.message) from error
        try:
            result = export_hf(release=release, output=Path(options["output"]), actor=None)
        except ExportLeak as error:
            raise CommandError(f"export refused, private strings found: {error}") from error
        for name, n in result.configs.items():
            self.stdout.write(f"{name}: {n} rows")
        self.stdout.write(
            f"wrote {result.files} files, {result.bytes} bytes in {result.seconds:.2f} s to {result.path}"
        )
        try:
            if options["vlmevalkit"]:
                tsv = write_vlmevalkit(read_public(root), Path(options["vlmevalkit"]))
                self.stdout.write(
                    f"VLMEvalKit: {tsv['files']}, {tsv['bytes']} bytes in {tsv['seconds']:.2f} s"
                )
            if options["lmms_eval"]:
                folder = Path(options["lmms_eval"])
                lmms = write_lmms_eval(read_public(root), folder, release_sources(release))
                self.stdout.write(
                    f"lmms-eval: tasks {', '.join(lmms['tasks'])}; {lmms['files']} files, {lmms['bytes']} bytes "
                    f"in {lmms['seconds']:.2f} s (score with PHYSALIGN_PRIVATE_KEY={root}/private/mappings.json)"
                )
        except ExportLeak as error:
            raise CommandError(f"export refused, private strings found: {error}") from error
        if options["push_to_hub"]:
            self.stdout.write(push_to_hub(result.path, options["push_to_hub"], private=not options["public"]))
