"""Backups of the running app and the media files rows name (``manage.py backup``, ``restore``, ``media_prune``).

It lives in ``home``, the top app, because the list of referenced media reads models of every app below it."""

from .prune import PruneReport, media_prune
from .references import MediaReferences, media_references
from .restore import RestoreResult, backup_restore
from .snapshot import BackupResult, backup_create

__all__ = [
    "BackupResult",
    "MediaReferences",
    "PruneReport",
    "RestoreResult",
    "backup_create",
    "backup_restore",
    "media_prune",
    "media_references",
]
