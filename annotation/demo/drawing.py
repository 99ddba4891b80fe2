"""Pillow drawing helpers that report the exact pixel box of everything they draw.

Coordinates are pixels with the origin at the top-left. Every helper returns a ``PixelBox``: a
half-open box ``[x0, x1) × [y0, y1)`` that contains every pixel the helper may have touched.
``to_bbox_1000`` turns it into the kit's 0–1000 frame (Kit §2.6) with *outward* rounding:

    x0_1000 = floor(x0 * 1000 / W)    x1_1000 = ceil(x1 * 1000 / W)     (same for y with H)

so the region a consumer recovers with ``x * W / 1000`` always contains the drawn ink. The
result is clamped to 0..1000 and is never zero-area.

Pillow's built-in font (Aileron, ``ImageFont.load_default(size=...)``) covers ASCII and
Latin-1 symbols such as ``°`` but not Greek letters; ``Ω`` and ``θ`` are therefore drawn as
small vector glyphs of matching size, so labels such as ``4 Ω`` stay legible without font files.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

INK = (0, 0, 0)
PAPER = (255, 255, 255)
SHADE = (214, 214, 214)
LINE = 2

VECTOR_GLYPHS = frozenset("Ωθ")


@dataclass(frozen=True)
class PixelBox:
    x0: float
    y0: float
    x1: float
    y1: float

    def union(self, other: PixelBox) -> PixelBox:
        return PixelBox(
            min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1)
        )

    def pad(self, amount: float) -> PixelBox:
        return PixelBox(self.x0 - amount, self.y0 - amount, self.x1 + amount, self.y1 + amount)


def box_of(points: list[tuple[float, float]], pad: float = 0.0) -> PixelBox:
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return PixelBox(min(xs) - pad, min(ys) - pad, max(xs) + pad + 1, max(ys) + pad + 1)


def _floor_1000(value: float, size: int) -> int:
    return math.floor(value * 1000 / size)


def _ceil_1000(value: float, size: int) -> int:
    return math.ceil(value * 1000 / size)


def to_bbox_1000(box: PixelBox, width: int, height: int) -> list[int]:
    x0 = min(max(_floor_1000(box.x0, width), 0), 999)
    y0 = min(max(_floor_1000(box.y0, height), 0), 999)
    x1 = max(min(_ceil_1000(box.x1, width), 1000), x0 + 1)
    y1 = max(min(_ceil_1000(box.y1, height), 1000), y0 + 1)
    return [x0, y0, x1, y1]


def to_point_1000(point: tuple[float, float], width: int, height: int) -> list[int]:
    x = min(max(round(point[0] * 1000 / width), 0), 1000)
    y = min(max(round(point[1] * 1000 / height), 0), 1000)
    return [x, y]


def to_radius_1000(radius: float, width: int, height: int) -> int:
    """Radius normalized by min(W, H) / 1000, like the kit's circle locator (Kit §2.6)."""
    return min(max(round(radius * 1000 / min(width, height)), 0), 1000)


@lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont:
    loaded = ImageFont.load_default(size=size)
    assert isinstance(loaded, ImageFont.FreeTypeFont), "Pillow without FreeType has no sized default font"
    return loaded


class Canvas:
    """A white RGB image plus drawing helpers returning exact ink boxes."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.image = Image.new("RGB", (width, height), PAPER)
        self.draw = ImageDraw.Draw(self.image)

    # -- text -------------------------------------------------------------------------------
    def _vector_glyph(self, char: str, x: float, baseline: float, size: int) -> PixelBox:
        """Draw Ω or θ with its left edge at ``x``; return its ink box."""
        stroke = max(1, round(size / 11))
        if char == "Ω":
            r = size * 0.31
            cx, cy = x + r + 1, baseline - size * 0.40
            self.draw.arc([cx - r, cy - r, cx + r, cy + r], start=125, end=415, fill=INK, width=stroke)
            foot_y = baseline - stroke / 2
            left = (cx - r * math.cos(math.radians(55)), cy + r * math.sin(math.radians(55)))
            right = (cx + r * math.cos(math.radians(55)), cy + r * math.sin(math.radians(55)))
            self.draw.line([left, (left[0], foot_y), (cx - r - 1, foot_y)], fill=INK, width=stroke)
            self.draw.line([right, (right[0], foot_y), (cx + r + 1, foot_y)], fill=INK, width=stroke)
            return PixelBox(cx - r - 2, cy - r - 1, cx + r + 3, baseline + 1)
        # θ: an upright ellipse with a horizontal bar.
        rx, ry = size * 0.24, size * 0.36
        cx, cy = x + rx + 1, baseline - ry - 1
        self.draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], outline=INK, width=stroke)
        self.draw.line([(cx - rx, cy), (cx + rx, cy)], fill=INK, width=stroke)
        return PixelBox(cx - rx - 1, cy - ry - 1, cx + rx + 2, cy + ry + 2)

    def _advance(self, char: str, size: int) -> float:
        if char == "Ω":
            return size * 0.62 + 3
        if char == "θ":
            return size * 0.48 + 3
        return font(size).getlength(char)

    def text(self, center: tuple[float, float], text: str, size: int = 18) -> PixelBox:
        """Draw ``text`` centred on ``center``; return the exact ink box (``textbbox`` based)."""
        fnt = font(size)
        runs: list[str] = []
        for char in text:
            if char in VECTOR_GLYPHS or not runs or runs[-1][-1:] in VECTOR_GLYPHS:
                runs.append(char)
            else:
                runs[-1] += char
        total = sum(self._advance(c, size) for c in runs if c in VECTOR_GLYPHS)
        total += sum(fnt.getlength(r) for r in runs if r not in VECTOR_GLYPHS)
        ascent, descent = fnt.getmetrics()
        x: float = round(center[0] - total / 2)
        baseline = round(center[1] + (ascent - descent) / 2 - size * 0.12)
        box: PixelBox | None = None
        for run in runs:
            if run in VECTOR_GLYPHS:
                part = self._vector_glyph(run, x, baseline, size)
                x += self._advance(run, size)
            else:
                self.draw.text((x, baseline), run, font=fnt, fill=INK, anchor="ls")
                left, top, right, bottom = self.draw.textbbox((x, baseline), run, font=fnt, anchor="ls")
                part = PixelBox(left, top, right, bottom)
                x += fnt.getlength(run)
            box = part if box is None else box.union(part)
        assert box is not None, "empty label"
        return box

    # -- shapes -----------------------------------------------------------------------------
    def line(self, a: tuple[float, float], b: tuple[float, float], width: int = LINE) -> PixelBox:
        self.draw.line([a, b], fill=INK, width=width)
        return box_of([a, b], pad=width / 2 + 1)

    def polyline(self, points: list[tuple[float, float]], width: int = LINE) -> PixelBox:
        self.draw.line(points, fill=INK, width=width, joint="curve")
        return box_of(points, pad=width / 2 + 1)

    def polygon(
        self, points: list[tuple[float, float]], fill: tuple[int, int, int] | None = SHADE, width: int = LINE
    ) -> PixelBox:
        self.draw.polygon(points, fill=fill, outline=INK, width=width)
        return box_of(points, pad=width / 2 + 1)

    def rect(
        self, x0: float, y0: float, x1: float, y1: float, fill: tuple[int, int, int] | None = SHADE
    ) -> PixelBox:
        return self.polygon([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], fill=fill)

    def circle(
        self,
        center: tuple[float, float],
        radius: float,
        fill: tuple[int, int, int] | None = None,
        width: int = LINE,
    ) -> PixelBox:
        cx, cy = center
        self.draw.ellipse(
            [cx - radius, cy - radius, cx + radius, cy + radius], fill=fill, outline=INK, width=width
        )
        return PixelBox(cx - radius - 1, cy - radius - 1, cx + radius + 2, cy + radius + 2)

    def dot(self, center: tuple[float, float], radius: float = 3.5) -> PixelBox:
        return self.circle(center, radius, fill=INK, width=1)

    def arc(self, center: tuple[float, float], radius: float, start: float, end: float) -> PixelBox:
        cx, cy = center
        self.draw.arc(
            [cx - radius, cy - radius, cx + radius, cy + radius], start=start, end=end, fill=INK, width=LINE
        )
        points = [
            (cx + radius * math.cos(math.radians(a)), cy + radius * math.sin(math.radians(a)))
            for a in _angles(start, end)
        ]
        return box_of(points, pad=LINE + 1)

    def arrow(
        self, tail: tuple[float, float], head: tuple[float, float], width: int = LINE, head_len: float = 11.0
    ) -> PixelBox:
        self.draw.line([tail, head], fill=INK, width=width)
        angle = math.atan2(head[1] - tail[1], head[0] - tail[0])
        left = (head[0] - head_len * math.cos(angle - 0.4), head[1] - head_len * math.sin(angle - 0.4))
        right = (head[0] - head_len * math.cos(angle + 0.4), head[1] - head_len * math.sin(angle + 0.4))
        self.draw.polygon([head, left, right], fill=INK, outline=INK)
        return box_of([tail, head, left, right], pad=width / 2 + 1)

    def double_arrow(self, a: tuple[float, float], b: tuple[float, float]) -> PixelBox:
        """A dimension line with arrow heads at both ends."""
        return self.arrow(a, b, width=1, head_len=8).union(self.arrow(b, a, width=1, head_len=8))

    def hatch(self, x0: float, x1: float, y: float, up: bool = True) -> PixelBox:
        """A fixed support (ceiling or ground): a thick line with short diagonal hatching."""
        self.draw.line([(x0, y), (x1, y)], fill=INK, width=3)
        step, depth = 12, 9 if up else -9
        x = x0 + 4
        while x < x1:
            self.draw.line([(x, y), (x + 7, y - depth)], fill=INK, width=1)
            x += step
        return box_of([(x0, y), (x1 + 7, y - depth)], pad=2)

    def png_bytes(self) -> bytes:
        """PNG without metadata; fixed compression settings make the bytes reproducible."""
        buffer = io.BytesIO()
        self.image.save(buffer, format="PNG", optimize=False, compress_level=6)
        return buffer.getvalue()


def _angles(start: float, end: float) -> list[float]:
    if end < start:
        end += 360
    steps = max(2, int((end - start) / 5) + 1)
    return [start + (end - start) * i / (steps - 1) for i in range(steps)]
