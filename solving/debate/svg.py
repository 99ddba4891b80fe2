"""Validation and post-processing of the Visual Extractor's SVG (Debate §3.2.2). Django-free.

``clean_svg(reply, cap)`` finds the one ``<svg>…</svg>`` in a model reply, parses it with
``xml.etree``, rejects anything that could act or fetch (scripts, event handlers, foreign
elements, external references, DTDs), drops everything outside the element, inlines ``<tspan>``
sub/superscripts as ``N_1`` / ``x^{2}``, and re-serializes it. ``truncate_svg`` shortens an
over-long SVG politely: it removes trailing elements (never cuts markup), so the result stays
well-formed, and says so in a comment.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ALLOWED_ELEMENTS = frozenset(
    {
        "svg",
        "g",
        "defs",
        "title",
        "desc",
        "symbol",
        "use",
        "path",
        "line",
        "polyline",
        "polygon",
        "rect",
        "circle",
        "ellipse",
        "text",
        "tspan",
        "textPath",
        "marker",
        "linearGradient",
        "radialGradient",
        "stop",
        "clipPath",
        "mask",
        "pattern",
        "style",
        "metadata",
    }
)
_SVG_BLOCK = re.compile(r"<svg\b.*</svg\s*>", re.S | re.I)
_EXTERNAL_URL = re.compile(r"url\(\s*['\"]?(?!#)", re.I)


class SvgError(ValueError):
    """The reply holds no acceptable SVG; the message says why (recorded in the transcript)."""


@dataclass(frozen=True)
class SvgResult:
    svg: str
    chars: int
    inlined_scripts: int  # sub/superscript tspans inlined


def _local(name: str) -> tuple[str, str]:
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return "", name


def _check(element: ET.Element) -> None:
    namespace, tag = _local(element.tag)
    if namespace not in ("", SVG_NS):
        raise SvgError(f"foreign element <{tag}> ({namespace})")
    if tag not in ALLOWED_ELEMENTS:
        raise SvgError(f"element <{tag}> is not allowed")
    for key, value in element.attrib.items():
        attr_ns, attr = _local(key)
        if attr.lower().startswith("on"):
            raise SvgError(f"event handler attribute {attr} on <{tag}>")
        if attr == "href" and attr_ns in ("", XLINK_NS) and not value.strip().startswith("#"):
            raise SvgError(f"external reference {value[:60]!r} on <{tag}>")
        if attr_ns not in ("", XLINK_NS, "http://www.w3.org/XML/1998/namespace"):
            raise SvgError(f"foreign attribute {attr} on <{tag}>")
        if _EXTERNAL_URL.search(value) or "javascript:" in value.lower():
            raise SvgError(f"external url in {attr} on <{tag}>")
    if tag == "style" and element.text and (_EXTERNAL_URL.search(element.text) or "@import" in element.text):
        raise SvgError("external reference in <style>")


def _leading_number(value: str) -> float | None:
    match = re.match(r"[+-]?(\d+\.?\d*|\.\d+)", value.strip())
    return float(match.group()) if match else None


def _shift(element: ET.Element) -> str | None:
    """'_' for a subscript tspan, '^' for a superscript, None otherwise."""
    shift = (element.get("baseline-shift") or "").strip().lower()
    match = re.search(r"baseline-shift\s*:\s*([^;]+)", element.get("style") or "")
    if match:
        shift = match.group(1).strip().lower()
    if shift == "sub":
        return "_"
    if shift == "super":
        return "^"
    amount = _leading_number(shift)
    if amount:
        return "^" if amount > 0 else "_"
    # A small dy offset on a short tspan is the other common way to draw an index (dy > 0: down).
    dy = _leading_number(element.get("dy") or "")
    if dy and len("".join(element.itertext())) <= 6:
        return "_" if dy > 0 else "^"
    return None


def _inline_scripts(root: ET.Element) -> int:
    """Replace sub/superscript tspans by inline text (N_1, x^{2}); returns how many."""
    count = 0
    for parent in list(root.iter()):
        previous: ET.Element | None = None
        for child in list(parent):
            marker = _shift(child) if _local(child.tag)[1] == "tspan" and not len(child) else None
            if marker is None:
                previous = child
                continue
            content = "".join(child.itertext())
            inline = (f"{marker}{content}" if len(content) == 1 else f"{marker}{{{content}}}") + (
                child.tail or ""
            )
            if previous is None:
                parent.text = (parent.text or "") + inline
            else:
                previous.tail = (previous.tail or "") + inline
            parent.remove(child)
            count += 1
    return count


def _serialize(element: ET.Element, root: bool = True) -> str:
    namespace, tag = _local(element.tag)
    attrs = []
    if root:
        attrs.append(f' xmlns="{SVG_NS}"')
    for key, value in element.attrib.items():
        attr_ns, attr = _local(key)
        if root and attr == "xmlns":
            continue
        name = {"http://www.w3.org/XML/1998/namespace": f"xml:{attr}"}.get(attr_ns, attr)
        attrs.append(f" {name}={quoteattr(value)}")
    inner = escape(element.text or "") + "".join(
        _serialize(child, root=False) + escape(child.tail or "") for child in element
    )
    if not inner:
        return f"<{tag}{''.join(attrs)}/>"
    return f"<{tag}{''.join(attrs)}>{inner}</{tag}>"


def parse_svg(reply: str) -> ET.Element:
    """The reply's one SVG element, validated. Raises ``SvgError``."""
    match = _SVG_BLOCK.search(reply or "")
    if not match:
        raise SvgError("no <svg>…</svg> element in the reply")
    block = match.group(0)
    if re.search(r"<!DOCTYPE|<!ENTITY", block, re.I):
        raise SvgError("DTDs and entities are not allowed")
    try:
        root = ET.fromstring(block)
    except ET.ParseError as exc:
        raise SvgError(f"malformed SVG: {exc}") from exc
    if _local(root.tag)[1] != "svg":
        raise SvgError("the root element is not <svg>")
    for element in root.iter():
        _check(element)
    return root


def clean_svg(reply: str) -> SvgResult:
    """Validate and normalise the SVG in ``reply`` (no cap applied). Raises ``SvgError``."""
    root = parse_svg(reply)
    inlined = _inline_scripts(root)
    root.tail = None
    svg = _serialize(root)
    return SvgResult(svg=svg, chars=len(svg), inlined_scripts=inlined)


def truncate_svg(svg: str, cap: int) -> tuple[str, int]:
    """Shorten a clean SVG to at most ``cap`` characters by dropping trailing elements.

    Returns (svg, elements removed). Elements are removed last-first in document order, so the
    opening of the figure (usually the geometry) survives; a comment records the omission.
    The result is always well-formed; if even an empty root exceeds the cap, the root's
    attributes alone are kept.
    """
    if len(svg) <= cap:
        return svg, 0
    root = ET.fromstring(svg)
    removed = 0
    note_room = 64
    length = len(svg)
    while len(root) and length + note_room > cap:
        while len(root) and length + note_room > cap:
            parent, child = root, root[-1]
            while len(child):  # descend to the last leaf
                parent, child = child, child[-1]
            parent.remove(child)
            removed += 1
            length -= len(_serialize(child, root=False)) + len(escape(child.tail or ""))
        length = len(_serialize(root))  # exact again (an emptied parent may now self-close)
    note = f"<!-- truncated: {removed} elements omitted to fit {cap} characters -->"
    out = _serialize(root)
    if out.endswith("/>"):
        out = out[:-2] + f">{note}</svg>"
    else:
        out = out[: -len("</svg>")] + note + "</svg>"
    if len(out) > cap:
        out = _serialize(
            ET.Element(
                root.tag,
                {k: v for k, v in root.attrib.items() if _local(k)[1] in ("viewBox", "width", "height")},
            )
        )
    return out, removed
