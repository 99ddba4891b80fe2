"""Localized views (Kit §2.10): one locator per PNG, full frame, 32 px white padding, no crop.

Pure: Pillow only. The PNG bytes are deterministic for a given Pillow build and input image.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import PIL
from PIL import Image, ImageDraw, ImageFont

from kit.canonical import bytes_digest, canonical_bytes

from .errors import require
from .geometry import active_origin, affine_points, origin_fingerprint, source_points
from .types import RenderedAsset

PADDING = 32
MARK_COLOUR = "#1254ce"
LABEL_XY = (8, 8)
AFFINE = [1, 0, PADDING, 0, 1, PADDING]
MAX_VIEWS = 128


def renderer_profile(max_views: int = MAX_VIEWS) -> dict[str, Any]:
    return {
        "id": "full_frame_single_locator_bbox_v1",
        "pillow": PIL.__version__,
        "padding_px": PADDING,
        "scale": 1,
        "max_views": max_views,
        "geometry_policy": "explicit_source_bbox_only_no_keypoint_order_inference",
    }


def pixels_sha256(img: Image.Image) -> str:
    blob = canonical_bytes({"mode": img.mode, "size": [img.width, img.height]}) + b"\0" + img.tobytes()
    return bytes_digest(blob)


def asset_record(data: bytes, relative_path: str) -> dict[str, Any]:
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        require(getattr(img, "n_frames", 1) == 1, "MULTIFRAME_IMAGE_UNSUPPORTED")
        require(img.getexif().get(274, 1) in (None, 1), "EXIF_ORIENTATION_REQUIRES_EXPLICIT_REPAIR")
        return {
            "relative_path": relative_path,
            "width": img.width,
            "height": img.height,
            "mode": img.mode,
            "bytes_sha256": bytes_digest(data),
            "pixels_sha256": pixels_sha256(img),
            "orientation_policy": "stored_pixels",
        }


def visual_representations(view: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """Order: visual R anchors, then H references, then candidates in display order."""
    reps = [(alias, 0, loc) for alias, loc in view["anchors"].items() if loc["kind"] == "visual"]
    for alias, locs in view["reference_views"].items():
        reps.extend((alias, i, loc) for i, loc in enumerate(locs) if loc["kind"] == "visual")
    for candidate in view["candidates"]:
        reps.extend(
            (candidate["alias"], i, loc)
            for i, loc in enumerate(candidate.get("locators", []))
            if loc["kind"] == "visual"
        )
    return reps


def encode_png(canvas: Image.Image) -> bytes:
    """PNG bytes exactly as the Kit's renderer writes a view: ``save(format="PNG")`` with no other argument
    (Pillow's default zlib level, no ``optimize``, no extra chunks), so view hashes in manifests agree with
    the Kit's on the same Pillow/zlib build. Slower than a fast zlib level; fidelity wins."""
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG")
    return buffer.getvalue()


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=16)


@lru_cache(maxsize=64)
def _padded_base(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as original:
        original.load()
        canvas = Image.new("RGB", (original.width + 2 * PADDING, original.height + 2 * PADDING), "white")
        rgba = original.convert("RGBA")
        canvas.paste(rgba, (PADDING, PADDING), rgba)
    return canvas


class _RenderCache:
    """The last few rendered views by what fully determines their bytes: the original's SHA-256, the locator's
    display points and the label. Probes of one parent draw the same locator with the same alias often (about a
    quarter of all views at paper scale), and a view is a pure function of those inputs, so a hit hands back
    the very bytes a render would have produced, without the PNG encoding that is most of a render's time."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], tuple[bytes, str, str, int, int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> tuple[bytes, str, str, int, int, str] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[Any, ...], value: tuple[bytes, str, str, int, int, str]) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)


_rendered = _RenderCache(512)


def _draw(data: bytes, seq: list[tuple[Any, ...]], alias: str) -> tuple[bytes, str, str, int, int, str]:
    """One view's PNG bytes, their SHA-256, the pixels' SHA-256, width, height and mode."""
    canvas = _padded_base(data).copy()
    draw = ImageDraw.Draw(canvas)
    draw.line(seq + [seq[0]], fill=MARK_COLOUR, width=2)
    draw.text(LABEL_XY, alias, font=_font(), fill=MARK_COLOUR)
    png = encode_png(canvas)
    return png, bytes_digest(png), pixels_sha256(canvas), canvas.width, canvas.height, canvas.mode


def render_views(
    view: dict[str, Any],
    assets: dict[str, Any],
    originals: dict[str, bytes],
    *,
    prefix: str,
    max_views: int = MAX_VIEWS,
) -> tuple[list[RenderedAsset], list[dict[str, Any]]]:
    """Return the rendered PNGs (with asset records) and the render manifest (display records)."""
    reps = visual_representations(view)
    require(len(reps) <= max_views, "DISPLAY_BUDGET_EXCEEDED", str(len(reps)))
    rendered, displays = [], []
    for n, (alias, index, loc) in enumerate(reps, 1):
        image_id = loc["image_id"]
        asset = assets[image_id]
        points = affine_points(source_points(loc, asset["width"], asset["height"]), AFFINE)
        seq = [tuple(p) for p in points]
        key = (asset["bytes_sha256"], tuple(seq), alias)
        drawn = _rendered.get(key)
        if drawn is None:
            drawn = _draw(originals[image_id], seq, alias)
            _rendered.put(key, drawn)
        png, png_sha256, pixels, width, height, mode = drawn
        view_id = f"V{n}"
        record = {
            "relative_path": f"{prefix}/{view_id}.png",
            "width": width,
            "height": height,
            "mode": mode,
            "bytes_sha256": png_sha256,
            "pixels_sha256": pixels,
            "orientation_policy": "stored_pixels",
        }
        rendered.append(RenderedAsset(view_id=view_id, png=png, record=record))
        origin = active_origin(loc, view["context"], assets)
        displays.append(
            {
                "view_id": view_id,
                "source_image_id": image_id,
                "source_version": asset["bytes_sha256"],
                "output_asset_id": view_id,
                "source_to_display": list(AFFINE),
                "marks": [
                    {
                        "alias": alias,
                        "locator_index": index,
                        "origin_fingerprint": origin_fingerprint(origin),
                        "points_px": points,
                    }
                ],
            }
        )
    return rendered, displays
