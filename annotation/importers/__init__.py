"""Importers: a problems manifest (JSONL + images) and a kit source workspace (Kit §2.1–§2.3).

Every import runs in two phases:

1. The check phase reads and validates every row, every image and every pass document outside
   any transaction, collecting every problem it finds into an ``ImportReport``. An ``ImportJob``'s
   progress (``total``/``done``) is written here, so other connections can watch it.
2. Only when no row has an error, the write phase stores everything in ONE atomic block. If any
   row has an error, nothing at all is written and the report lists every problem, row by row.

Both importers are idempotent: a row whose content (image hashes included) equals what is stored
changes nothing and writes no event; a changed row updates the parent (``version`` + 1) and
its images in place.

Report codes are upper-case and stable (``IMAGE_MISSING``, ``SOURCE_REVIEW_HASH_STALE``, …).
Errors refuse the whole import; warnings are informational and never block it. A change the uploader may
not make (``authority``: approved content, source fields) is *refused*: listed in the row's ``refused`` with
the fields it concerns, never applied, and the row is never reported ``unchanged`` for it.

One job per module: ``report`` (what an import found), ``authority`` (what the uploader may change),
``prepared`` (checked rows waiting to be written), ``rows`` (reading and row rules), ``writes`` (the
database writes), ``problems`` (the JSONL manifest), ``kit_files``/``kit_rows``/``kit_passes``/``kit``
(the Kit workspace), ``zips`` (archive safety), ``progress`` and ``jobs`` (uploads run by Celery).
"""

from .jobs import import_job_create, import_job_run
from .kit import import_kit_workspace
from .problems import import_problems_manifest
from .progress import import_job_discard_upload, import_job_fail
from .report import ImportReport, RowReport
from .rows import detect_language, resolve_answer_type
from .zips import extract_zip

__all__ = [
    "ImportReport",
    "RowReport",
    "extract_zip",
    "detect_language",
    "import_job_create",
    "import_job_discard_upload",
    "import_job_fail",
    "import_job_run",
    "import_kit_workspace",
    "import_problems_manifest",
    "resolve_answer_type",
]
