"""manage.py datasheet --release ID [--format text|json|csv]: the release's datasheet (the paper's Tables 1, 6, 7
and the data of Figures 3 and 6), the figures its page shows: as Markdown tables (text, the default), as the JSON
of the release folder's datasheet.json, or as its long CSV (``table,row,column,value``)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from probes.datasheet.selectors import datasheet_for_release
from probes.datasheet.tables import csv_text, json_text, markdown
from probes.models import Release

FORMATS = {"text": markdown, "json": json_text, "csv": csv_text}


class Command(BaseCommand):
    help = "Print a release's datasheet (Tables 1, 6, 7; Figures 3, 6) as Markdown, JSON or CSV."

    def add_arguments(self, parser):
        parser.add_argument("--release", required=True, help="release id (NREL-…), or a unique prefix of one")
        parser.add_argument("--format", choices=sorted(FORMATS), default="text")

    def handle(self, *args, **options):
        wanted = options["release"]
        releases = list(Release.objects.filter(release_id__startswith=wanted)[:2])
        exact = [r for r in releases if r.release_id == wanted]
        if exact:
            release = exact[0]
        elif len(releases) == 1 and len(wanted) >= 9:
            release = releases[0]
        elif releases:
            raise CommandError(f"{wanted} names more than one release: give more of its id")
        else:
            raise CommandError(f"no release {wanted}")
        self.stdout.write(FORMATS[options["format"]](datasheet_for_release(release)), ending="")
