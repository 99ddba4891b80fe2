"""Where a probe's attachments come from, in one place: each attachment id names a rendered view of the probe
or an original image of its parent, in the order the model receives them. Both are files in the media storage
(Django's default storage: the filesystem, or an S3-compatible bucket): a view under a content-addressed name
(``views/<sha256[:2]>/<sha256>.png``, so identical renders are stored once), an original where the import put
it. The probe browser, the reviewer's page, evaluation runs and release exports all resolve them here, and the
compiler stores views through :func:`view_store`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation.models import ProblemImage
from kit.canonical import bytes_digest

from .models import Probe, RenderedView

VIEW_MEDIA_TYPE = "image/png"


class AttachmentMissing(KeyError):
    """An attachment id of the probe names neither one of its views nor one of its parent's images."""


@dataclass(frozen=True)
class Attachment:
    """One attachment's metadata; ``read()`` fetches its bytes from the media storage."""

    asset_id: str
    sha256: str  # of the bytes (views: as rendered; originals: as imported)
    media_type: str
    suffix: str
    width: int
    height: int
    view_pk: int | None = None
    view_name: str = ""  # the view's name in the media storage
    image: ProblemImage | None = None

    @property
    def is_view(self) -> bool:
        return self.view_pk is not None

    def read(self) -> bytes:
        if self.view_pk is not None:
            with default_storage.open(self.view_name, "rb") as handle:
                return handle.read()
        assert self.image is not None
        with self.image.file.open("rb") as handle:
            return handle.read()


def _original(img: ProblemImage) -> Attachment:
    name = img.file.name
    assert name is not None  # a loaded row's file column (NOT NULL)
    return Attachment(
        img.image_id, img.sha256, img.media_type, Path(name).suffix.lower(), img.width, img.height, image=img
    )


class AttachmentIndex:
    """The attachments of a batch of probes, from two metadata queries (no bytes are loaded)."""

    def __init__(self, probes: Iterable[Probe]) -> None:
        probes = list(probes)
        self._views = {
            (probe_id, view_id): Attachment(
                view_id, sha, VIEW_MEDIA_TYPE, ".png", width, height, view_pk=pk, view_name=name
            )
            for pk, probe_id, view_id, sha, width, height, name in RenderedView.objects.filter(
                probe_id__in=[p.pk for p in probes]
            ).values_list("pk", "probe_id", "view_id", "bytes_sha256", "width", "height", "file")
        }
        self._originals = {
            (img.parent_id, img.image_id): _original(img)
            for img in ProblemImage.objects.filter(parent_id__in={p.parent_id for p in probes}).only(
                "parent_id", "image_id", "file", "sha256", "media_type", "width", "height"
            )
        }

    def get(self, probe: Probe, asset_id: str) -> Attachment | None:
        """The attachment ``asset_id`` of ``probe``, or None if it is not one of the probe's attachments."""
        if asset_id not in probe.attachment_ids:
            return None
        return self._views.get((probe.pk, asset_id)) or self._originals.get((probe.parent_id, asset_id))

    def of(self, probe: Probe) -> tuple[Attachment, ...]:
        """Every attachment of ``probe`` in order; AttachmentMissing if one resolves to nothing."""
        found = []
        for asset_id in probe.attachment_ids:
            attachment = self.get(probe, asset_id)
            if attachment is None:
                raise AttachmentMissing(
                    f"{probe.logical_probe_id}: attachment {asset_id} has no view or image"
                )
            found.append(attachment)
        return tuple(found)


def attachment_of(probe: Probe, asset_id: str) -> Attachment | None:
    return AttachmentIndex([probe]).get(probe, asset_id)


def view_storage_name(sha256: str) -> str:
    """Where the view whose bytes have this SHA-256 lives in the media storage."""
    return f"views/{sha256[:2]}/{sha256}.png"


def view_store(png: bytes, sha256: str | None = None) -> str:
    """Store a rendered view's bytes under their content-addressed name and return the name. Bytes already
    stored there are not written again (a recompile of unchanged views writes nothing); a file of another
    size there (a write cut short by a killed worker) is replaced, and a write that fails removes what it wrote."""
    name = view_storage_name(sha256 or bytes_digest(png))
    if default_storage.exists(name):
        if default_storage.size(name) == len(png):
            return name
        default_storage.delete(name)
    try:
        saved = default_storage.save(name, ContentFile(png))
    except Exception:
        # the disk filled up or the write failed part-way: drop what it left so that no later compile, page or
        # export finds a truncated view under the content's name, then let the run fail with the reason
        if default_storage.exists(name) and default_storage.size(name) != len(png):
            default_storage.delete(name)
        raise
    if saved != name:  # another worker stored the same bytes a moment ago; the storage gave ours a new name
        default_storage.delete(saved)
    return name
