"""Image intake checks (Kit §2.10): format allowlist, byte and pixel caps, single frame, EXIF
orientation 1, and the kit's ``pixels_sha256``. Pure: Pillow only, no Django.

The size check happens on the header, before any pixel is decoded, so a decompression bomb is
refused without being expanded in memory.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

from kit.canonical import canonical_bytes

ALLOWED_FORMATS = {
    "PNG": ("image/png", "png"),
    "JPEG": ("image/jpeg", "jpg"),
    "WEBP": ("image/webp", "webp"),
    "GIF": ("image/gif", "gif"),
    "BMP": ("image/bmp", "bmp"),
}
DEFAULT_MAX_PIXELS = 40_000_000
DEFAULT_MAX_BYTES = 25 * 1024 * 1024
EXIF_ORIENTATION_TAG = 0x0112


class ImageRejected(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ImageInfo:
    format: str
    media_type: str
    suffix: str
    width: int
    height: int
    mode: str
    byte_size: int
    sha256: str
    pixels_sha256: str


def pixels_sha256(img: Image.Image) -> str:
    header = canonical_bytes({"mode": img.mode, "size": [img.width, img.height]})
    return hashlib.sha256(header + b"\0" + img.tobytes()).hexdigest()


def inspect_image_bytes(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES
) -> ImageInfo:
    """Validate image bytes and describe them, or raise ``ImageRejected`` with a stable code."""
    if not data:
        raise ImageRejected("image_empty", "The image file is empty.")
    if len(data) > max_bytes:
        raise ImageRejected(
            "image_too_large_bytes", f"The image is {len(data):,} bytes; the limit is {max_bytes:,} bytes."
        )
    with _open_image(data, max_pixels=max_pixels) as img:
        format_, width, height = _check_header(img, max_pixels=max_pixels)
        try:
            img.load()
        except (OSError, SyntaxError, ValueError) as exc:
            raise ImageRejected("image_corrupt", f"The image data is damaged ({exc}).") from exc
        media_type, suffix = ALLOWED_FORMATS[format_]
        return ImageInfo(
            format=format_,
            media_type=media_type,
            suffix=suffix,
            width=width,
            height=height,
            mode=img.mode,
            byte_size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            pixels_sha256=pixels_sha256(img),
        )


def _open_image(data: bytes, *, max_pixels: int) -> Image.Image:
    """Open (not decode) the image, turning Pillow's own refusals into ``ImageRejected``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        # Pillow's own guard (≈89 Mpx warning, ≈179 Mpx error) fires on the header, before our cap.
        raise ImageRejected(
            "image_too_large_pixels", f"The image has too many pixels; the limit is {max_pixels:,}."
        ) from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise ImageRejected("image_corrupt", f"The file is not a readable image ({exc}).") from exc


def _check_header(img: Image.Image, *, max_pixels: int) -> tuple[str, int, int]:
    """The checks the header answers, before any pixel is decoded: format, size, one frame, upright.
    Returns the image's format, width and height."""
    if img.format not in ALLOWED_FORMATS:
        raise ImageRejected(
            "image_format_unsupported",
            f"Format {img.format} is not allowed; use PNG, JPEG, WebP, GIF or BMP.",
        )
    width, height = img.size
    if width <= 0 or height <= 0:
        raise ImageRejected("image_corrupt", "The image has no pixels.")
    if width * height > max_pixels:
        raise ImageRejected(
            "image_too_large_pixels",
            f"The image is {width}×{height} = {width * height:,} pixels; the limit is {max_pixels:,}.",
        )
    if getattr(img, "n_frames", 1) > 1:
        raise ImageRejected("image_multi_frame", "Multi-frame (animated) images are not accepted.")
    orientation = img.getexif().get(EXIF_ORIENTATION_TAG, 1)
    if orientation not in (None, 1):
        raise ImageRejected(
            "image_exif_orientation",
            f"EXIF orientation is {orientation}; only 1 (stored pixels as shown) is "
            "accepted. Re-save the image with its rotation applied.",
        )
    return img.format, width, height
