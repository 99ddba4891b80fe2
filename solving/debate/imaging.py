"""Deterministic image operations of the Level-4 problem parser (Debate §3.2.1). Django-free.

- ``profile_split``: the cropper's deterministic fallback — a straight boundary between the text
  block (top or left) and the diagram, from the projection profile of ink pixels.
- ``draw_boundary`` / ``split_image``: what the propose–verify loop shows and cuts.
- ``sharpen``: background from border pixels, tight content crop, whitening of near-background
  pixels and isolated specks (connected strokes kept), mild UnsharpMask. Never resizes or warps:
  the output is exactly the content bounding box of the input.
- ``tesseract_text``: local OCR of a text region.
- ``compose_image_only``: renders a Level-4 style image (text block + diagram) for demos and tests.

Every function is a pure function of its inputs (same bytes in → same bytes out).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from llm.types import ImageInput

INK_DELTA = 60  # a pixel is ink when it differs from the background by more than this (0–255)
WHITEN_DELTA = 30  # non-ink pixels this close to the background become background (anti-aliasing kept)
NEAR_WHITE = 235  # pixels at least this bright on every channel become pure white
MAX_SPECK_PIXELS = 2  # 8-connected dark components this small are noise, not strokes
MAX_DECODED_PIXELS = 40_000_000
FONT_PATHS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
)


class ImageDecodeError(ValueError):
    """The bytes are not an image Pillow can read (or are absurdly large)."""


@dataclass(frozen=True)
class Split:
    """A straight boundary: ``horizontal`` puts the text on top, ``vertical`` on the left."""

    orientation: str  # "horizontal" | "vertical"
    fraction: float  # boundary position as a fraction of the height (horizontal) or width (vertical)

    @property
    def text_side(self) -> str:
        return "top" if self.orientation == "horizontal" else "left"


@dataclass(frozen=True)
class SharpenReport:
    background: tuple[int, int, int]
    bbox: tuple[int, int, int, int] | None  # (left, top, right, bottom) in input pixels; None when blank
    specks_removed: int
    whitened_pixels: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "background": list(self.background),
            "bbox": list(self.bbox) if self.bbox else None,
            "specks_removed": self.specks_removed,
            "whitened_pixels": self.whitened_pixels,
        }


def load(image: ImageInput) -> Image.Image:
    """Decode to RGB (alpha composited on white). Raises ``ImageDecodeError`` on anything unreadable."""
    try:
        with Image.open(io.BytesIO(image.data)) as raw:
            if raw.width * raw.height > MAX_DECODED_PIXELS:
                raise ImageDecodeError(f"image too large ({raw.width}×{raw.height} pixels)")
            raw.load()
            if raw.mode in ("RGBA", "LA") or (raw.mode == "P" and "transparency" in raw.info):
                rgba = raw.convert("RGBA")
                canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                canvas.alpha_composite(rgba)
                return canvas.convert("RGB")
            return raw.convert("RGB")
    except ImageDecodeError:
        raise
    except Exception as exc:  # Pillow raises many types for bad bytes
        raise ImageDecodeError(f"unreadable image: {exc.__class__.__name__}: {exc}") from exc


def encode_png(img: Image.Image) -> ImageInput:
    buffer = io.BytesIO()
    img.save(buffer, format="PNG", optimize=False, compress_level=6)
    return ImageInput(data=buffer.getvalue(), media_type="image/png")


def _pixels(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.int16)


def background_color(arr: np.ndarray) -> tuple[int, int, int]:
    """Median colour of the one-pixel border: robust to a figure touching one edge."""
    border = np.concatenate([arr[0, :], arr[-1, :], arr[:, 0], arr[:, -1]], axis=0)
    return cast(tuple[int, int, int], tuple(int(v) for v in np.median(border, axis=0)))  # RGB: three channels


def ink_mask(arr: np.ndarray, background: tuple[int, int, int], delta: int = INK_DELTA) -> np.ndarray:
    distance = np.abs(arr - np.array(background, dtype=np.int16)).max(axis=2)
    return distance > delta


def _widest_interior_gap(profile: np.ndarray, quiet: float) -> tuple[int, int] | None:
    """The longest run of quiet lines with ink on both sides, as (start, stop) — or None."""
    inked = np.nonzero(profile > quiet)[0]
    if inked.size < 2:
        return None
    best: tuple[int, int] | None = None
    for left, right in zip(inked[:-1], inked[1:], strict=True):
        if right - left > 1 and (best is None or right - left - 1 > best[1] - best[0]):
            best = (int(left) + 1, int(right))
    return best


def _without_specks(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(mask without tiny 8-connected components, the specks' mask, how many specks)."""
    # Imported here, not at the top: scipy.ndimage costs ~0.4 s and the URL conf imports this module
    # (debate views → frontend), and loading the URL conf or a manage.py command imports neither scipy.ndimage
    # nor sympy (tests/evaluation/test_metrics_cli.py).
    from scipy import ndimage

    labels, count = ndimage.label(mask, structure=np.ones((3, 3), dtype=bool))
    if not count:
        return mask, np.zeros_like(mask), 0
    sizes = np.bincount(labels.ravel())
    small = sizes <= MAX_SPECK_PIXELS
    small[0] = False
    specks = small[labels]
    return mask & ~specks, specks, int(small.sum())


def profile_split(img: Image.Image) -> Split:
    """Deterministic cropper: the widest low-ink gap between the text block and the diagram.

    Looks for a band of (almost) empty rows (text on top) and of empty columns (text on the left)
    with ink on both sides, ignoring isolated specks, and cuts in the middle of the wider band in
    pixels (a tie favours text on top). Without any interior gap it cuts at the quietest row of
    the middle band. Never fails.
    """
    arr = _pixels(img)
    height, width = arr.shape[:2]
    if height < 2 and width < 2:
        return Split("horizontal", 0.5)
    mask, _, _ = _without_specks(ink_mask(arr, background_color(arr)))
    rows, cols = mask.sum(axis=1), mask.sum(axis=0)
    candidates: list[tuple[int, Split]] = []
    if height >= 2:
        gap = _widest_interior_gap(rows, quiet=max(0.0, 0.002 * width))
        if gap:
            candidates.append((gap[1] - gap[0], Split("horizontal", (gap[0] + gap[1]) / 2 / height)))
    if width >= 2:
        gap = _widest_interior_gap(cols, quiet=max(0.0, 0.002 * height))
        if gap:
            candidates.append((gap[1] - gap[0], Split("vertical", (gap[0] + gap[1]) / 2 / width)))
    if candidates:
        return max(candidates, key=lambda c: c[0])[1]  # max keeps the first (horizontal) on a tie
    if height < 2:
        return Split("vertical", 0.5)
    low, high = max(1, int(height * 0.2)), max(2, int(np.ceil(height * 0.8)))
    band = rows[low:high]
    row = low + int(np.argmin(band)) if band.size else height // 2
    return Split("horizontal", min(max(row / height, 1 / height), (height - 1) / height))


def boundary_pixel(size: tuple[int, int], split: Split) -> int:
    """The first pixel row/column of the diagram region, kept strictly inside the image."""
    extent = size[1] if split.orientation == "horizontal" else size[0]
    if extent < 2:
        return extent
    return min(max(round(split.fraction * extent), 1), extent - 1)


def split_image(img: Image.Image, split: Split) -> tuple[Image.Image, Image.Image]:
    """(text region, diagram region). A one-pixel-wide side cannot be split: all of it is diagram."""
    width, height = img.size
    cut = boundary_pixel(img.size, split)
    if split.orientation == "horizontal":
        if height < 2:
            return img.crop((0, 0, width, 0)), img.copy()
        return img.crop((0, 0, width, cut)), img.crop((0, cut, width, height))
    if width < 2:
        return img.crop((0, 0, 0, height)), img.copy()
    return img.crop((0, 0, cut, height)), img.crop((cut, 0, width, height))


def draw_boundary(img: Image.Image, split: Split) -> Image.Image:
    """A copy with the candidate boundary drawn as a red line (what the verifier looks at)."""
    out = img.copy()
    draw = ImageDraw.Draw(out)
    cut = boundary_pixel(img.size, split)
    thickness = max(2, min(img.size) // 150)
    if split.orientation == "horizontal":
        draw.rectangle((0, max(0, cut - thickness // 2), img.width, cut + thickness // 2), fill=(230, 0, 0))
    else:
        draw.rectangle((max(0, cut - thickness // 2), 0, cut + thickness // 2, img.height), fill=(230, 0, 0))
    return out


def sharpen(img: Image.Image) -> tuple[Image.Image, SharpenReport]:
    """Clean a cropped diagram without changing its geometry.

    1. background = median colour of the border pixels;
    2. ink = pixels farther than ``INK_DELTA`` from it; 8-connected ink components of at most
       ``MAX_SPECK_PIXELS`` pixels are noise, so they are not ink;
    3. crop tightly to the bounding box of the remaining ink (no resize, no warp);
    4. non-ink pixels within ``WHITEN_DELTA`` of the background, near-white pixels and specks
       become pure white (the background colour on a dark background);
    5. a mild UnsharpMask.
    A blank image (no ink) comes back unchanged.
    """
    arr = _pixels(img)
    background = background_color(arr)
    mask = ink_mask(arr, background)
    mask, speck_mask, specks = _without_specks(mask)
    if not mask.any():
        return img.copy(), SharpenReport(background, None, specks, 0)
    ys, xs = np.nonzero(mask)
    left, top, right, bottom = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    out = arr.copy()
    light = sum(background) / 3 >= 128
    fill = np.array((255, 255, 255) if light else background, dtype=np.int16)
    near_background = ~mask & (np.abs(arr - np.array(background, dtype=np.int16)).max(axis=2) <= WHITEN_DELTA)
    near_white = (arr >= NEAR_WHITE).all(axis=2) if light else np.zeros_like(mask)
    whiten = (near_background | near_white | speck_mask) & ~mask
    out[whiten] = fill
    cropped = out[top:bottom, left:right].astype(np.uint8)
    result = Image.fromarray(cropped, "RGB").filter(
        ImageFilter.UnsharpMask(radius=1, percent=60, threshold=3)
    )
    whitened = int(whiten[top:bottom, left:right].sum())
    return result, SharpenReport(background, (left, top, right, bottom), specks, whitened)


def tesseract_text(img: Image.Image) -> str:
    """Local OCR (Debian tesseract). Raises ``RuntimeError`` when tesseract is missing or fails."""
    import pytesseract

    gray = img.convert("L")
    padded = Image.new("L", (gray.width + 40, gray.height + 40), 255)
    padded.paste(gray, (20, 20))
    try:
        text = pytesseract.image_to_string(padded, config="--psm 6")
    except pytesseract.TesseractNotFoundError as exc:
        raise RuntimeError("tesseract is not installed (apt-get install tesseract-ocr)") from exc
    except (pytesseract.TesseractError, OSError) as exc:
        raise RuntimeError(f"tesseract failed: {exc}") from exc
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in FONT_PATHS:
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _wrap(text: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont, max_width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        words = paragraph.split()
        if not words:
            lines.append("")
            continue
        current = ""
        for word in words:
            candidate = f"{current} {word}".strip()
            if current and font.getlength(candidate) > max_width:
                lines.append(current)
                current = word
            else:
                current = candidate
            while font.getlength(current) > max_width and len(current) > 1:
                # A single word wider than the block: hard-wrap it at the longest prefix that fits.
                cut = len(current) - 1
                while cut > 1 and font.getlength(current[:cut]) > max_width:
                    cut -= 1
                lines.append(current[:cut])
                current = current[cut:]
        lines.append(current)
    return lines


def compose_image_only(text: str, image: ImageInput, *, text_side: str = "top") -> ImageInput:
    """Render a Level-4 style image-only problem: a text block on top or left, then the diagram.

    A white gutter separates the two regions (as on real image-only problems). Deterministic:
    same text, image and side → same PNG bytes. Raises ``ValueError`` on a bad side or image.
    """
    if text_side not in ("top", "left"):
        raise ValueError("text_side must be 'top' or 'left'")
    diagram = load(image)
    font = _font(24)
    margin, gutter, line_height = 16, 40, 32
    block_width = max(diagram.width, 480) - 2 * margin if text_side == "top" else 420
    lines = _wrap(text, font, block_width)
    block_height = 2 * margin + line_height * len(lines)
    if text_side == "top":
        width = max(diagram.width, block_width + 2 * margin)
        canvas = Image.new("RGB", (width, block_height + gutter + diagram.height), (255, 255, 255))
        origin, diagram_at = (margin, margin), (0, block_height + gutter)
    else:
        width = block_width + 2 * margin + gutter + diagram.width
        canvas = Image.new("RGB", (width, max(block_height, diagram.height)), (255, 255, 255))
        origin, diagram_at = (margin, margin), (block_width + 2 * margin + gutter, 0)
    draw = ImageDraw.Draw(canvas)
    for index, line in enumerate(lines):
        draw.text((origin[0], origin[1] + index * line_height), line, fill=(0, 0, 0), font=font)
    canvas.paste(diagram, diagram_at)
    return encode_png(canvas)
