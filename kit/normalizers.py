"""OCR reading normalizers ``ocr_literal_v2_1`` and ``ocr_label_v2_1`` (Kit §5.4). Pure.

No case folding, no decimal-value equivalence, no unit conversion; subscript braces stay literal.
``None`` means the value is not a supported reading (an invalid field; for a gold reading an export
error, ``UNSUPPORTED_GOLD_READING``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

LITERAL = "ocr_literal_v2_1"
LABEL = "ocr_label_v2_1"
PROFILES = (LITERAL, LABEL)

UNITS = (
    "kg",
    "g",
    "mg",
    "m",
    "cm",
    "mm",
    "km",
    "s",
    "ms",
    "A",
    "mA",
    "V",
    "mV",
    "N",
    "J",
    "W",
    "C",
    "T",
    "Hz",
    "K",
    "Pa",
    "Ω",
)
NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
_UNIT_ALTERNATIVES = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_NUMBER_UNIT = re.compile(rf"({NUMBER})[ \t\u00a0\u202f]*({_UNIT_ALTERNATIVES})")
_LETTER_WRAPPER = re.compile(r"\\(?:mathrm|text)\{([A-Za-z]+)\}")
_MATH_PAIRS = (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$"))
_SPACING = ("\\,", "\\;", "\\:", "\\!", "\\ ")


class UnsupportedGoldReading(ValueError):
    code = "UNSUPPORTED_GOLD_READING"


def meaningful_text(value: Any) -> bool:
    """A string with at least one character that is neither whitespace nor a control/format/separator."""
    return isinstance(value, str) and any(
        not ch.isspace() and unicodedata.category(ch)[0] not in ("C", "Z") for ch in value
    )


def normalize(value: Any, profile: str) -> str | None:
    if profile not in PROFILES:
        raise ValueError(f"unknown normalizer {profile!r}")
    if not meaningful_text(value):
        return None
    text = unicodedata.normalize("NFC", value).strip()
    if profile == LITERAL:
        return text
    return _label_reading(text)


def _label_reading(text: str) -> str | None:
    """The label profile on NFC-stripped, meaningful text: outer math delimiters and letter wrappers off,
    TeX spacing to spaces, U+2212 to ``-``, a number+unit joined by one space; ``None`` when TeX is left."""
    unwrapped = _without_math_delimiters(text)
    if unwrapped is None or "$" in unwrapped:
        return None
    text = _LETTER_WRAPPER.sub(lambda m: m.group(1), unwrapped)
    for spacing in _SPACING:
        text = text.replace(spacing, " ")
    if "\\" in text:  # \vec, \mathbf, \frac … would lose meaning silently
        return None
    text = text.replace("\u2212", "-").strip()
    if not meaningful_text(text):
        return None
    match = _NUMBER_UNIT.fullmatch(text)
    return f"{match.group(1)} {match.group(2)}" if match else text


def _without_math_delimiters(text: str) -> str | None:
    """``text`` without its one outer math delimiter pair (only the first pair that opens it), or as it is
    when none opens it; ``None`` when the pair that opens it is incomplete or empty."""
    for opener, closer in _MATH_PAIRS:
        if text.startswith(opener):
            if not text.endswith(closer) or len(text) <= len(opener) + len(closer):
                return None
            return text[len(opener) : -len(closer)].strip()
    return text


def numeric_unit_parts(text: str) -> tuple[str, str] | None:
    """``(number, unit)`` when all of ``text`` is the label profile's number+unit form (a NUMBER, any
    separator the profile allows, one listed unit), else ``None``. The same pattern ``normalize`` uses."""
    match = _NUMBER_UNIT.fullmatch(text)
    return (match.group(1), match.group(2)) if match else None


def equivalent(prediction: Any, gold: Any, profile: str) -> bool:
    expected = normalize(gold, profile)
    if expected is None:
        raise UnsupportedGoldReading(f"gold reading {gold!r} is not supported by {profile}")
    predicted = normalize(prediction, profile)
    return predicted is not None and predicted == expected
