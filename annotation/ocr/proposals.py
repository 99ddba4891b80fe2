"""Text-glyph proposals for Pass 1 from Tesseract (pure: no Django, no ORM).

``propose(image_bytes, options)`` reads one diagram and returns the labels it finds, each a box in image
pixels and in ``bbox_1000`` (the workspace's one rule, ``annotation.workspace.bbox_px_to_1000``), its
transcription and Tesseract's confidence.

How (every step has an option, tuned on generated scenes with ``bench/ocr_proposals.py --grid``):

1. grey → ink at ``binarize`` (a pixel darker than the threshold is ink); light fills (blocks, inclines)
   fall away;
2. the 8-connected ink components that cannot be glyphs are erased: taller or wider than ``max_glyph_px``
   (lines, outlines, axes, hatching joined to its ground) or a flat stroke; what stays is the grey image of
   the glyphs alone, so a line crossing near a label never reaches Tesseract;
3. glyphs on one line with a gap under ``join_gap`` × the taller one are one label ("5.0 kg", "30°"),
   separate labels stay separate (Tesseract's own page layout drops lone letters like "A" or "k"); a label
   lower than ``min_text_px`` (dashes of a dashed line, dots) is not read;
4. each label's crop is scaled by ``scale``, padded and read with ``image_to_data``: one glyph as one
   character (``--psm 10``), more as one line (``psm``, 7);
5. a label is kept when it holds a letter or digit and its mean word confidence reaches ``min_confidence``;
   Tesseract's usual misreadings of physics labels are repaired (``repair_label``).

Known limit: Tesseract's ``eng`` model has no Ω in its character set, so a drawn "6 Ω" reads "62" or "69";
the annotator edits those.
"""

from __future__ import annotations

import io
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

from annotation.workspace import bbox_px_to_1000

ENGINE = "tesseract"
PIPELINE_VERSION = "ocr_proposals_v1"


class OcrInputError(ValueError):
    """The image bytes or the options cannot be read (a clear message for the run's ``error``)."""


@dataclass(frozen=True)
class OcrOptions:
    scale: int = 2
    binarize: int = 160  # 1..254: a grey value below it is ink
    psm: int = 7  # a label crop is one line of text
    min_confidence: float = 10.0
    max_glyph_px: int = 40  # a component taller or wider than this (original pixels) is not a glyph
    min_text_px: int = 7  # a label lower than this (original pixels) is not read
    join_gap: float = 0.6  # words closer than join_gap × line height are one label
    lang: str = "eng"
    clean: bool = True
    antialias: bool = False
    repair: bool = True

    @classmethod
    def from_dict(cls, raw: Any) -> OcrOptions:
        """Options from JSON (an API body, a run's stored ``options``): unknown keys and bad values refused."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise OcrInputError("OCR options must be an object.")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise OcrInputError(f"Unknown OCR option(s): {', '.join(unknown)}.")
        base = asdict(cls())
        base.update(raw)
        options = cls(**base)
        options.check()
        return options

    def check(self) -> None:
        checks = (
            (
                isinstance(self.scale, int) and not isinstance(self.scale, bool) and 1 <= self.scale <= 6,
                "scale",
            ),
            (isinstance(self.binarize, int) and 1 <= self.binarize <= 254, "binarize"),
            (self.psm in (6, 7, 8, 13), "psm"),
            (
                isinstance(self.min_confidence, int | float) and 0 <= self.min_confidence <= 100,
                "min_confidence",
            ),
            (isinstance(self.max_glyph_px, int) and 4 <= self.max_glyph_px <= 400, "max_glyph_px"),
            (isinstance(self.min_text_px, int) and 1 <= self.min_text_px <= 100, "min_text_px"),
            (isinstance(self.join_gap, int | float) and 0 <= self.join_gap <= 5, "join_gap"),
            (self.lang == "eng", "lang"),
            (
                all(isinstance(v, bool) for v in (self.clean, self.repair, self.antialias)),
                "clean/repair/antialias",
            ),
        )
        bad = [name for ok, name in checks if not ok]
        if bad:
            raise OcrInputError(
                f"Invalid OCR option(s): {', '.join(bad)} (scale 1–6, binarize 1–254, psm 6/7/8/13, "
                "min_confidence 0–100, max_glyph_px 4–400, min_text_px 1–100, join_gap 0–5, lang eng)."
            )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Proposal:
    bbox_px: tuple[int, int, int, int]  # x0, y0, x1, y1 in image pixels, x1/y1 exclusive
    bbox_1000: list[int]
    text: str
    confidence: float  # 0–100, the mean of the label's words


@dataclass(frozen=True)
class ProposalResult:
    width: int
    height: int
    proposals: list[Proposal] = field(default_factory=list)


Box = tuple[int, int, int, int]
Mask = npt.NDArray[np.bool_]
Pixels = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class _Label:
    box: Box
    parts: tuple[Box, ...]  # its glyph components, left to right


def propose(image_bytes: bytes, options: OcrOptions | None = None) -> ProposalResult:
    """The labels Tesseract reads in one image, top to bottom then left to right."""
    options = options or OcrOptions()
    options.check()
    gray = _open_gray(image_bytes)
    width, height = gray.size
    pixels = np.asarray(gray)
    ink = pixels < options.binarize
    boxes, mask = _glyph_boxes(ink, options.max_glyph_px if options.clean else max(width, height))
    glyph_ink = _glyph_page(pixels, mask, options.antialias)
    proposals = []
    for label in _labels(boxes, options.join_gap):
        if label.box[3] - label.box[1] < options.min_text_px:
            continue  # dashes of a dashed line, dots, hatching: lower than any readable letter
        read = _read_label(glyph_ink, label, options)
        if read is None:
            continue
        text, conf = read
        text = repair_label(text) if options.repair else text
        if conf < options.min_confidence or not re.search(r"[0-9A-Za-z]", text):
            continue
        proposals.append(Proposal(label.box, bbox_px_to_1000(label.box, width, height), text, round(conf, 1)))
    proposals.sort(key=lambda p: (p.bbox_px[1], p.bbox_px[0]))
    return ProposalResult(width, height, proposals)


def _open_gray(image_bytes: bytes) -> Image.Image:
    try:
        with Image.open(io.BytesIO(image_bytes)) as opened:
            opened.load()
            if opened.mode in ("RGBA", "LA", "P"):
                rgba = opened.convert("RGBA")
                flat = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                flat.alpha_composite(rgba)
                return flat.convert("L")
            return opened.convert("L")
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise OcrInputError(f"The image cannot be read: {exc}") from exc


def _glyph_boxes(ink: Mask, max_glyph_px: int) -> tuple[list[Box], Mask]:
    """The boxes of the 8-connected ink components that can be glyphs (lines, outlines and fills cannot),
    and the mask of their pixels."""
    from scipy import ndimage  # loaded on first use: the URL conf must not import it

    labels, count = ndimage.label(ink, structure=np.ones((3, 3), dtype=bool))
    boxes = []
    keep = np.zeros(count + 1, dtype=bool)
    for index, window in enumerate(ndimage.find_objects(labels), start=1):
        if window is None:
            continue
        h = window[0].stop - window[0].start
        w = window[1].stop - window[1].start
        flat_stroke = (
            w >= 12 and h * 6 <= w
        )  # a piece of a horizontal line (a tall thin one may be "1" or "l")
        if max(h, w) <= max_glyph_px and not flat_stroke:
            boxes.append((window[1].start, window[0].start, window[1].stop, window[0].stop))
            keep[index] = True
    return boxes, keep[labels]


def _glyph_page(gray: Pixels, mask: Mask, antialias: bool) -> Pixels:
    """What Tesseract reads: the glyphs black on white, or (``antialias``) the grey image with everything but
    the glyphs and a one-pixel rim painted white."""
    from scipy import ndimage  # loaded on first use: the URL conf must not import it

    if not antialias:
        return np.where(mask, 0, 255).astype(np.uint8)
    rim = ndimage.binary_dilation(mask, structure=np.ones((3, 3), dtype=bool))
    return np.where(rim, gray, 255).astype(np.uint8)


def _labels(boxes: list[Box], join_gap: float) -> list[_Label]:
    """Glyph boxes on one line with small gaps between them, grouped into labels.

    Two boxes join when they overlap vertically by a quarter of the smaller height (a "°", a decimal point
    or a subscript still joins) and the horizontal gap is at most ``join_gap`` × the taller one; grouping
    repeats until nothing joins."""
    groups = [(box, [box]) for box in sorted(boxes)]
    changed = True
    while changed:
        changed = False
        out: list[tuple[Box, list[Box]]] = []
        for box, parts in groups:
            for i, (other, other_parts) in enumerate(out):
                if _joins(other, box, join_gap):
                    union = (
                        min(other[0], box[0]),
                        min(other[1], box[1]),
                        max(other[2], box[2]),
                        max(other[3], box[3]),
                    )
                    out[i] = (union, other_parts + parts)
                    changed = True
                    break
            else:
                out.append((box, parts))
        groups = sorted(out)
    return [_Label(box, tuple(sorted(parts))) for box, parts in groups]


def _joins(a: Box, b: Box, join_gap: float) -> bool:
    ha, hb = a[3] - a[1], b[3] - b[1]
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    gap = max(a[0], b[0]) - min(a[2], b[2])
    return overlap >= 0.25 * min(ha, hb) and gap <= join_gap * max(ha, hb)


def _read_label(ink: Pixels, label: _Label, options: OcrOptions) -> tuple[str, float] | None:
    """The label's text and mean word confidence, or None when Tesseract reads nothing: a label of one glyph
    is read as one character (``--psm 10``), any other as one line (``options.psm``)."""
    if len(label.parts) == 1:
        return _tesseract(ink, label.box, options, psm=10)
    whole = _tesseract_words(ink, label.box, options, options.psm)
    if whole:
        return " ".join(t for t, _ in whole), sum(c for _, c in whole) / len(whole)
    return None


def _tesseract(ink: Pixels, box: Box, options: OcrOptions, *, psm: int) -> tuple[str, float] | None:
    words = _tesseract_words(ink, box, options, psm)
    if not words:
        return None
    text = "".join(t for t, _ in words) if psm == 10 else " ".join(t for t, _ in words)
    if psm == 10 and len(text) == 2 and text[0].lower() == text[1].lower():
        text = text[0]  # one glyph read twice ("Pp" for P): Tesseract's LSTM on a lone letter
    return text, sum(c for _, c in words) / len(words)


def _tesseract_words(page_pixels: Pixels, box: Box, options: OcrOptions, psm: int) -> list[tuple[str, float]]:
    """``image_to_data`` on the glyph-only grey crop of ``box``, scaled and padded: (word, confidence) pairs."""
    import pytesseract

    x0, y0, x1, y1 = box
    crop = Image.fromarray(page_pixels[y0:y1, x0:x1], mode="L")
    s = options.scale
    if s > 1:
        crop = crop.resize((crop.width * s, crop.height * s), Image.Resampling.LANCZOS)
    pad = max(10, crop.height // 2)
    page = Image.new("L", (crop.width + 2 * pad, crop.height + 2 * pad), 255)
    page.paste(crop, (pad, pad))
    try:
        data = pytesseract.image_to_data(
            page, lang=options.lang, config=f"--psm {psm}", output_type=pytesseract.Output.DICT
        )
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrInputError("Tesseract is not installed on this worker.") from exc
    return [
        ((raw or "").strip(), float(conf))
        for raw, conf in zip(data["text"], data["conf"], strict=True)
        if (raw or "").strip() and float(conf) >= 0
    ]


_NUMBER = r"[+\-−]?(?:\d+(?:\.\d+)?|\.\d+)"
_UNIT_FIXES = {"nNC": "nC", "NC": "nC", "nc": "nC", "Kg": "kg", "kq": "kg", "kg.": "kg"}
_OHM_LOOKALIKES = ("Q", "O", "Ω", "0", "©", "QO", "Qa")


def repair_label(text: str) -> str:
    """Tesseract's usual misreadings of diagram labels, repaired; anything else unchanged.

    * a number glued to its unit gets one space ("0.50m" → "0.50 m"; a stray "," or "¥" between them goes);
    * ``nNC``/``NC`` → ``nC``; ``Kg``/``kq`` → ``kg``;
    * an Ω (drawn, not in Tesseract's ``eng`` model) read as ``Q``/``O``/``0`` after a number → ``Ω``;
    * a degree sign read as ``°``, ``o`` or ``*`` after a number → ``°``, with no space ("37 o" → "37°");
    * a subscripted index read as ``l``/``|`` after a capital or ``q`` ("ql", "Rl") → ``1``.
    """
    text = " ".join(text.replace("—", "-").replace("–", "-").split())
    match = re.fullmatch(rf"({_NUMBER})[,¥]?\s*([A-Za-zΩ°©*º]+\.?)", text)
    if match:
        number, unit = match.group(1), match.group(2)
        if unit in ("°", "o", "*", "º"):
            return f"{number}°"
        if unit in _OHM_LOOKALIKES:
            return f"{number} Ω"
        return f"{number} {_UNIT_FIXES.get(unit, unit)}"
    match = re.fullmatch(r"([A-Zq])[l|I]", text)
    if match:
        return f"{match.group(1)}1"
    return text
