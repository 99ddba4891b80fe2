"""The ``ocr_label_v2_1`` and ``ocr_literal_v2_1`` normalizers (Kit §5.4), for diagnostics. Pure."""

from __future__ import annotations

import re
import unicodedata

UNITS = sorted(["kg", "g", "mg", "m", "cm", "mm", "km", "s", "ms", "A", "mA", "V", "mV", "N", "J", "W", "C", "T",
                "Hz", "K", "Pa", "Ω"], key=len, reverse=True)
NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
NUMBER_UNIT = re.compile(r"(" + NUMBER + r")[ \t\u00A0\u202F]*(" + "|".join(map(re.escape, UNITS)) + r")")
DELIMITERS = (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$"))
SPACING = ("\\,", "\\;", "\\:", "\\!", "\\ ")


def meaningful_text(value: object) -> bool:
    return isinstance(value, str) and any(
        not ch.isspace() and not unicodedata.category(ch).startswith(("C", "Z")) for ch in value)


def normalize_literal(value: object) -> str | None:
    if not meaningful_text(value):
        return None
    return unicodedata.normalize("NFC", str(value)).strip()


def normalize_label(value: object) -> str | None:
    if not meaningful_text(value):
        return None
    text = unicodedata.normalize("NFC", str(value)).strip()
    for opener, closer in DELIMITERS:
        if text.startswith(opener):
            if not text.endswith(closer) or len(text) <= len(opener) + len(closer):
                return None
            text = text[len(opener):-len(closer)].strip()
            break
    if "$" in text:
        return None
    text = re.sub(r"\\(?:mathrm|text)\{([A-Za-z]+)\}", r"\1", text)
    for token in SPACING:
        text = text.replace(token, " ")
    if "\\" in text:
        return None
    text = text.replace("\u2212", "-").strip()
    if not meaningful_text(text):
        return None
    match = NUMBER_UNIT.fullmatch(text)
    return f"{match.group(1)} {match.group(2)}" if match else text
