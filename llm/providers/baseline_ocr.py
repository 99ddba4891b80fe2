"""``baseline-ocr-nearest``: a real, non-LLM baseline that answers probes from the public input only.

It reads exactly what a model receives — the user message and the ordered image bytes — and:
- locates the single query anchor ``R<k>`` in ``[Evidence locations]`` (a visual bbox) and the
  candidates ``E<n>`` in ``[Candidates]``;
- picks the candidate nearest to the anchor with the Kit's nearest-region rule (Kit §5.6:
  squared distance from the anchor centre to each candidate rectangle, in source pixels, integer
  arithmetic scaled by 2000; a multi-part candidate takes its nearest part). Unlike the
  diagnostic, an answer must be given, so ties go to the first candidate in display order (the
  evaluation framework's controls also break ties by candidate order);
- transcribes the text inside the anchor box with Tesseract OCR when a read is requested.
When the rule does not apply (text anchor, several anchors, no bbox on the anchor's image) it
answers with the first candidate and an empty read, so the output stays well-formed.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any

from kit.nearest import controls_choice, nearest_region

from ..errors import ErrorKind, ProviderError
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage

LOCATOR_LINE = re.compile(r"^(?P<alias>[RE]\d+):\s*(?P<image>[^\s{]+)\s+(?P<geometry>\{.*\})\s*$")


@dataclass(frozen=True)
class Box:
    image_id: str
    x0: int
    y0: int
    x1: int
    y1: int


def _section(user: str, header: str) -> str:
    match = re.search(r"^" + re.escape(header) + r"\s*\n(.*?)(?=^\[[^\]\n]+\]\s*$|\Z)", user, re.S | re.M)
    return match.group(1) if match else ""


def _boxes(section: str) -> dict[str, list[Box]]:
    found: dict[str, list[Box]] = {}
    for line in section.splitlines():
        match = LOCATOR_LINE.match(line.strip())
        if not match:
            continue
        try:
            geometry = json.loads(match.group("geometry"))
        except ValueError:
            continue
        box = geometry.get("bbox_1000") if geometry.get("type") == "bbox" else None
        if isinstance(box, list) and len(box) == 4:
            found.setdefault(match.group("alias"), []).append(Box(match.group("image"), *map(int, box)))
        else:
            found.setdefault(match.group("alias"), [])
    return found


def _candidate_order(section: str) -> list[str]:
    order: list[str] = []
    for alias in re.findall(r"^(E\d+):", section, re.M):
        if alias not in order:
            order.append(alias)
    return order


def _attachment_ids(user: str) -> list[str]:
    legend = _section(user, "[Images and locator views]") or _section(user, "【图像与定位视图】")
    return re.findall(r"^([^\s:;]+):", legend, re.M)


def nearest_candidate(
    anchor: Box, candidates: dict[str, list[Box]], order: list[str], sizes: dict[str, tuple[int, int]]
) -> str | None:
    """Kit §5.6 ``public_R_center_to_rectangle_pixel_squared_v1`` (``kit.nearest``, the compiler's own
    rule) over the boxes parsed from the prompt; ties → first in display order."""
    if anchor.image_id not in sizes:
        return None

    def locator(box: Box) -> dict[str, Any]:
        return {
            "kind": "visual",
            "image_id": box.image_id,
            "geometry": {"type": "bbox", "bbox_1000": [box.x0, box.y0, box.x1, box.y1]},
        }

    view = {
        "query_anchor_ids": ["R"],
        "anchors": {"R": locator(anchor)},
        "candidates": [
            {"alias": alias, "locators": [locator(b) for b in candidates.get(alias, [])]} for alias in order
        ],
    }
    if not view["candidates"]:
        return None
    return controls_choice(nearest_region(view, sizes), order)


def ocr_box(image_bytes: bytes, box: Box) -> str:
    import pytesseract
    from PIL import Image

    with Image.open(io.BytesIO(image_bytes)) as opened:
        img = opened.convert("L")
        w, h = img.size
        left, top = box.x0 * w // 1000, box.y0 * h // 1000
        right, bottom = max(box.x1 * w // 1000, left + 1), max(box.y1 * h // 1000, top + 1)
        crop = img.crop((left, top, right, bottom))
        scale = max(1, 64 // max(crop.height, 1))
        if scale > 1:
            crop = crop.resize((crop.width * scale, crop.height * scale))
        padded = Image.new("L", (crop.width + 40, crop.height + 40), 255)
        padded.paste(crop, (20, 20))
        try:
            text = pytesseract.image_to_string(padded, config="--psm 7")
        except pytesseract.TesseractNotFoundError as exc:
            raise ProviderError(
                "tesseract is not installed (apt-get install tesseract-ocr).", kind=ErrorKind.CONFIG
            ) from exc
    return " ".join(text.split())


def _fill(template: Any, owner: str, reads: dict[str, str]) -> Any:
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, value in template.items():
            if key == "read" and isinstance(value, dict):
                out[key] = {anchor: reads.get(anchor, "") for anchor in value}
            elif key == "read":
                out[key] = next(iter(reads.values()), "")
            elif isinstance(value, list):
                out[key] = [owner]
            else:
                out[key] = owner
        return out
    return {"owner": owner}


class BaselineOCRNearestProvider:
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        from PIL import Image

        user = request.user
        anchors = _boxes(_section(user, "[Evidence locations]") or _section(user, "【证据位置】"))
        candidate_section = _section(user, "[Candidates]") or _section(user, "【候选】")
        candidates = _boxes(candidate_section)
        order = _candidate_order(candidate_section)
        format_text = (_section(user, "[Output format]") or _section(user, "【输出格式】")).strip()
        try:
            template = json.loads(format_text) if format_text else {"owner": ""}
        except ValueError:
            template = {"owner": ""}
        ids = _attachment_ids(user)
        images: dict[str, bytes] = {}
        for index, image in enumerate(request.images):
            images[ids[index] if index < len(ids) else f"img_{index}"] = image.data
        sizes: dict[str, tuple[int, int]] = {}
        for image_id, data in images.items():
            with Image.open(io.BytesIO(data)) as img:
                sizes[image_id] = img.size
        anchor_boxes = {alias: boxes for alias, boxes in anchors.items() if alias.startswith("R") and boxes}
        rule = "not_applicable"
        owner = order[0] if order else ""
        if len(anchors) == 1 and len(anchor_boxes) == 1:
            anchor = next(iter(anchor_boxes.values()))[0]
            chosen = nearest_candidate(anchor, candidates, order, sizes)
            if chosen is not None:
                owner, rule = chosen, "nearest_region"
        reads: dict[str, str] = {}
        wants_read = isinstance(template, dict) and "read" in template
        if wants_read:
            for alias, boxes in anchor_boxes.items():
                anchor_image = images.get(boxes[0].image_id)
                reads[alias] = ocr_box(anchor_image, boxes[0]) if anchor_image else ""
        answer = _fill(template, owner, reads)
        text = json.dumps(answer, ensure_ascii=False)
        return ProviderReply(
            text=text,
            finish_reason="stop",
            usage=Usage(),
            raw={"baseline": "ocr-nearest", "rule": rule, "reads": reads, "owner": owner},
        )
