"""Values and units as annotators type them (LaTeX, Unicode, plain text), read through pint. Pure: no Django.

* :func:`parse_unit` reads a unit (``"m/s^2"``, ``"\\mathrm{m\\,s^{-1}}"``, ``"k\\Omega"``, ``"\\mu C"``,
  ``"^\\circ"``, ``"N·m²/C²"``) into a :class:`Unit` (its pint dimensionality and its factor to SI), ``""`` is
  dimensionless, ``None`` means pint cannot read it.
* :func:`parse_value` reads a value (``"3.0\\times10^{8}"``, ``"−4.0"``, ``"5\\,\\mathrm{kg}"``,
  ``"\\frac{1}{2}"``) into a :class:`Value`: a number (with the resolution of its printed digits and any unit
  written after it), a symbol or expression (``"v_0"``, ``"2\\pi"``: not a number, not an error), empty
  (unknown), or invalid (digits and signs that make no number, e.g. ``"3.0.1"``).
* :func:`parse_label` reads a diagram label's text (``"5 m"``, ``"30°"``, ``"m = 2.0 kg"``, ``"+2.0 nC"``,
  ``"v = 0"``) into a :class:`Label`, or ``None`` when the label is not a printed value (``"m"``, ``"T1"``,
  ``"F"``, ``"(170 V) sin 120 πt"``, ``"3.0 m, 4.0 m"``).

Decisions: ``\\frac{a}{b}`` and ``a/b`` of two plain numbers are the number a/b with no rounding (an exact
fraction); ``\\frac`` of anything else is an expression. A leading ``\\approx``/``≈``/``~`` is dropped. Decimal
commas (``2,5``) are read as points, thousands separators (``1,500`` / ``1{,}500``) are dropped.

The pint registry is built once, on first use; parsed units are cached.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pint


@cache
def registry() -> pint.UnitRegistry:
    """The one pint registry (built on first use: ~0.15 s)."""
    import pint

    units = pint.UnitRegistry()
    # pint's gauss is the CGS unit (its own dimensions); annotators mean 10⁻⁴ T.
    units.define("si_gauss = 1e-4 * tesla")
    return units


@dataclass(frozen=True)
class Unit:
    text: str  # what was typed
    plain: str  # what pint read
    dimensionality: str  # pint's, e.g. "[length] / [time]"; "dimensionless"
    factor: float  # one of this unit in SI base units (offset units: see ``offset``)
    offset: bool = False  # °C/°F: a value converts with an offset, see ``to_si``

    def to_si(self, magnitude: float) -> float:
        if not self.offset:
            return magnitude * self.factor
        units = registry()
        return float(units.Quantity(magnitude, units.parse_units(self.plain)).to_base_units().magnitude)


@dataclass(frozen=True)
class Number:
    value: float
    resolution: float  # the place of the last printed digit ("2.0" → 0.1, "3.0×10^8" → 1e7); 0: exact
    text: str


ValueStatus = Literal["number", "symbolic", "empty", "invalid"]


@dataclass(frozen=True)
class Value:
    status: ValueStatus
    text: str
    number: Number | None = None
    unit: Unit | None = None  # a unit written after the number inside the value (``5\,\mathrm{kg}``)


@dataclass(frozen=True)
class Label:
    number: Number
    unit: Unit | None  # None: a bare number ("30", "v = 0")
    text: str
    named: bool = False  # written "symbol = value" ("θ = 30°", "v = 0")


# --------------------------------------------------------------------------------------------
# LaTeX / Unicode → plain text

_TEXT_COMMAND = re.compile(
    r"\\(?:text|mathrm|textrm|rm|mbox|textit|mathit|operatorname|textnormal|mathsf|unit|si)\s*\{((?:[^{}]|\{[^{}]*\})*)\}"
)
_SUPERSCRIPTS = str.maketrans({"²": "^2", "³": "^3", "¹": "^1", "⁴": "^4", "⁻": "^-"})


def _plain(text: str) -> str:
    """Spacing and text wrappers out, symbols spelled the way pint and the number grammar read them."""
    text = text.strip().strip("$").strip()
    previous = None
    while previous != text:
        previous, text = text, _TEXT_COMMAND.sub(r"\1", text)
    text = re.sub(r"\\(?:left|right|displaystyle)(?![A-Za-z])", "", text)
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    text = re.sub(r"\\[,;: ]|~|\\q?quad(?![A-Za-z])|\u00a0|\u2009|\u202f", " ", text)
    text = text.replace("\\!", "").replace("−", "-").replace("–", "-").replace("{,}", "")
    text = re.sub(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|º|˚", "°", text)
    text = re.sub(r"\\(?:times|cdot|ast)(?![A-Za-z])|[×·⋅∙]", "*", text)
    text = re.sub(r"(?:\\mu|μ|µ)\s*(?=[A-Za-z])", "u", text)
    text = re.sub(r"\\Omega(?![A-Za-z])|Ω|Ω", "ohm", text)
    text = text.replace("\\%", "%")
    text = text.translate(_SUPERSCRIPTS)
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------
# Units

_UNIT_ALIASES = (
    (re.compile(r"°\s*C\b"), " degC "),
    (re.compile(r"°\s*F\b"), " degF "),
    (re.compile(r"°"), " degree "),
    (re.compile(r"%"), " percent "),
    (re.compile(r"\b[Oo]hms?\b"), "ohm"),
    (re.compile(r"\bsecs?\b"), "s"),
    (re.compile(r"\bNm\b"), "N*m"),
    (re.compile(r"\bG\b"), "si_gauss"),
    (re.compile(r"\brev\b"), "revolution"),
    # a count per unit: "lines/cm", "turns/m" are 1/cm, 1/m
    (re.compile(r"^(?:lines?|turns?|slits?)\s*/"), "1/"),
)
_UNIT_CHARS = re.compile(r"^[A-Za-z_/*^()\s\d.\-+]*$")


@lru_cache(maxsize=4096)
def parse_unit(text: str) -> Unit | None:
    """The unit ``text`` names (``""``: dimensionless), or ``None`` when pint cannot read it."""
    plain = _plain(text)
    plain = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"(\1)/(\2)", plain)
    plain = plain.replace("{", "(").replace("}", ")")
    for pattern, replacement in _UNIT_ALIASES:
        plain = pattern.sub(replacement, plain)
    plain = " ".join(plain.split())
    if not plain:
        return Unit(text=text, plain="", dimensionality="dimensionless", factor=1.0)
    # No backslash commands left, and digits only in exponents: "2 m" is not a unit.
    if not _UNIT_CHARS.match(plain) or re.search(r"(?<![\^\-+(])\b\d|^\d", re.sub(r"^1\s*/", "", plain)):
        return None
    units = registry()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = units.parse_units(plain)
            dimensionality = str(units.Quantity(1, parsed).dimensionality)
            offset = not units.Quantity(1, parsed)._is_multiplicative
            factor = 1.0 if offset else float(units.Quantity(1.0, parsed).to_base_units().magnitude)
    except Exception:  # pint raises many error types on arbitrary input; all mean "not a unit"
        return None
    if not math.isfinite(factor):
        return None
    return Unit(text=text, plain=plain, dimensionality=dimensionality, factor=factor, offset=offset)


@lru_cache(maxsize=256)
def dimensionality_of(reference_unit: str) -> str:
    """The dimensionality of a reference unit written in the rule table (it must parse)."""
    unit = parse_unit(reference_unit)
    if unit is None:
        raise ValueError(f"The rule table's unit {reference_unit!r} is not a unit pint can read.")
    return unit.dimensionality


# --------------------------------------------------------------------------------------------
# Numbers and values

_DIGITS = r"(?:\d+(?:\.\d*)?|\.\d+)"
_NUMBER = re.compile(
    rf"(?P<sign>[-+]?)\s*(?:"
    rf"10\s*\^\s*\(?\s*(?P<bare>[-+]?\s*\d+)\s*\)?"
    rf"|(?P<mantissa>{_DIGITS})(?:\s*[eE]\s*(?P<e>[-+]?\d+)|\s*[*xX]\s*10\s*\^\s*\(?\s*(?P<p>[-+]?\s*\d+)\s*\)?)?"
    rf")"
)
_FRACTION = re.compile(
    rf"(?P<sign>[-+]?)\s*(?P<a>{_DIGITS})\s*/\s*(?P<b>{_DIGITS})"
)  # \frac{a}{b} is a/b by now
_UNKNOWN_MARKERS = frozenset({"", "?", "??", "-", "--", "—", "...", "…", "\\ldots", "\\cdots"})
_APPROX = re.compile(r"^(?:\\approx|≈|~|\\sim(?![A-Za-z]))\s*")
_LETTER = re.compile(r"[^\W\d_]|\\[A-Za-z]")


def _normalise_number_text(plain: str) -> str:
    plain = _APPROX.sub("", plain)
    plain = re.sub(r"(?<![\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])", lambda m: m.group(1).replace(",", ""), plain)
    plain = re.sub(r"(\d),(\d)", r"\1.\2", plain)
    plain = re.sub(rf"\\frac\s*\{{\s*({_DIGITS})\s*\}}\s*\{{\s*({_DIGITS})\s*\}}", r"\1/\2", plain)
    plain = re.sub(r"\{\s*([-+]?\d+(?:\.\d+)?)\s*\}", r"\1", plain)  # {10}^{-4} → 10^-4
    return plain


def _number_at_start(plain: str) -> tuple[Number | None, str]:
    """The number at the start of ``plain`` and the rest after it (``(None, plain)`` when there is none)."""
    fraction = _FRACTION.match(plain)
    if fraction:
        numerator, denominator = float(fraction.group("a")), float(fraction.group("b"))
        if denominator == 0:
            return None, plain
        sign = -1.0 if fraction.group("sign") == "-" else 1.0
        number = Number(sign * numerator / denominator, 0.0, fraction.group(0).strip())
        return number, plain[fraction.end() :]
    match = _NUMBER.match(plain)
    if not match or not match.group(0).strip("+- "):
        return None, plain
    sign = -1.0 if match.group("sign") == "-" else 1.0
    if match.group("bare") is not None:
        exponent = int(match.group("bare").replace(" ", ""))
        if abs(exponent) > 300:
            return None, plain
        return Number(sign * 10.0**exponent, 10.0**exponent, match.group(0).strip()), plain[match.end() :]
    mantissa = match.group("mantissa")
    exponent_text = match.group("e") or match.group("p") or "0"
    exponent = int(exponent_text.replace(" ", ""))
    if abs(exponent) > 300:
        return None, plain
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    value = sign * float(mantissa) * 10.0**exponent
    if not math.isfinite(value):
        return None, plain
    return Number(value, 10.0 ** (exponent - decimals), match.group(0).strip()), plain[match.end() :]


@lru_cache(maxsize=4096)
def parse_value(text: str) -> Value:
    """A quantity's ``value_latex``: a number (maybe followed by its unit), a symbol, empty or invalid."""
    plain = _normalise_number_text(_plain(text))
    if plain in _UNKNOWN_MARKERS:
        return Value("empty", text)
    number, rest = _number_at_start(plain)
    rest = rest.strip()
    if number is not None and not rest:
        return Value("number", text, number)
    if number is not None and not rest.startswith(("^", "\\", "_", "*", "/", ".")):
        unit = parse_unit(rest)
        if unit is not None:
            return Value("number", text, number, unit)
    if _LETTER.search(plain):
        return Value("symbolic", text)
    return Value("invalid", text)


_LABEL_NAME = re.compile(r"^[^=]{1,24}?=\s*")


@lru_cache(maxsize=4096)
def parse_label(text: str) -> Label | None:
    """A diagram label that prints a value (``"5 m"``, ``"30°"``, ``"θ = 30°"``, ``"12"``), else ``None``."""
    plain = _normalise_number_text(_plain(text))
    named = _LABEL_NAME.match(plain)
    if named:
        plain = plain[named.end() :]
    number, rest = _number_at_start(plain)
    if number is None:
        return None
    rest = rest.strip()
    if not rest:
        return Label(number, None, text, named=bool(named))
    unit = parse_unit(rest)
    if unit is None or unit.plain == "":
        return None
    return Label(number, unit, text, named=bool(named))
