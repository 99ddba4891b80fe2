"""The images a request carries (``probes.attachments``), cached per process by the SHA-256 of their bytes."""

from __future__ import annotations

import hashlib
import threading
from functools import cached_property

from cachetools import LRUCache

from llm import ImageInput
from probes.attachments import Attachment, AttachmentIndex, AttachmentMissing
from probes.models import Probe


class _Image(ImageInput):
    """An attachment whose digest is computed once: every request fingerprint hashes its images."""

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class _ImageCache:
    """Per-process LRU of attachments by the SHA-256 of their bytes (content-addressed, so never stale), bounded
    by the bytes it holds (cachetools' LRU sized by ``len`` of the data; a lock: runs use threads)."""

    def __init__(self, max_bytes: int) -> None:
        self._items: LRUCache[tuple[str, str], _Image] = LRUCache(
            maxsize=max_bytes, getsizeof=lambda image: len(image.data)
        )
        self._lock = threading.Lock()

    def get(self, sha256: str, media_type: str) -> _Image | None:
        with self._lock:
            return self._items.get((sha256, media_type))

    def put(self, sha256: str, image: _Image) -> _Image:
        if sha256 and len(image.data) <= self._items.maxsize:
            with self._lock:
                self._items[(sha256, image.media_type)] = image
        return image

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_image_cache = _ImageCache(max_bytes=64 * 2**20)


def attachments_load(probes: list[Probe]) -> dict[int, tuple[ImageInput, ...] | AttachmentError]:
    """Every probe's attachments in order (``probes.attachments``: rendered views, else the parent's originals).
    Two metadata queries; bytes come from the content-addressed cache, else one media-storage read per missing
    view or original (``Attachment.read``)."""
    if not probes:
        return {}
    index = AttachmentIndex(probes)
    resolved: dict[int, tuple[Attachment, ...] | AttachmentError] = {}
    for probe in probes:
        try:
            resolved[probe.pk] = index.of(probe)
        except AttachmentMissing as error:
            resolved[probe.pk] = AttachmentError(
                f"attachment of {probe.logical_probe_id} unreadable: {error}"
            )
    result: dict[int, tuple[ImageInput, ...] | AttachmentError] = {}
    for probe in probes:
        found = resolved[probe.pk]
        try:
            result[probe.pk] = (
                found
                if isinstance(found, AttachmentError)
                else tuple(
                    _image_cache.get(a.sha256, a.media_type)
                    or _image_cache.put(a.sha256, _Image(a.read(), a.media_type))
                    for a in found
                )
            )
        except (OSError, ValueError) as error:  # one unreadable file fails its probe's rows, not the chunk
            result[probe.pk] = AttachmentError(f"attachment of {probe.logical_probe_id} unreadable: {error}")
    return result


class AttachmentError(str):
    """Why a probe's attachments could not be loaded (its requests end infra_missing with this message)."""


def probe_images(probe: Probe) -> tuple[ImageInput, ...]:
    images = attachments_load([probe])[probe.pk]
    if isinstance(images, AttachmentError):
        raise OSError(images)
    return images
