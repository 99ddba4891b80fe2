"""Value-aware Canonicalizer (Debate §3.3.1, steps ii–iii), deterministic and Django-free.

``canonicalize(answer)`` turns one solver answer into a :class:`Canonical` of one kind:

- ``empty``: nothing was answered. Never equal to anything, not even another empty answer.
- ``choice``: option letters (``B``, ``(B)``, ``B.``, ``Option B``, ``b``, ``A, C``, ``AC``).
- ``quantity``: a number (scalar or ``\\hat{i}``/``\\hat{j}``/``\\hat{k}`` vector) with optional units,
  held in SI base units through pint; a plain number is a dimensionless quantity.
- ``expression``: a symbolic expression (sympy LaTeX parser) with free symbols, e.g. ``mg\\sin\\theta``.
- ``multi``: several labelled or separated parts (``a. 4.43 m/s^2; b. 21.5 N``), compared part by part.
- ``text``: anything else; equal only to the same text (whitespace collapsed, case folded).

``same_value(a, b, rel_tol=1e-2)`` compares two answers by value: quantities need identical SI
dimensions (angles count as a dimension of their own, so ``30°`` ≠ ``30``) and magnitudes within the
relative tolerance; expressions must agree at fixed sample points (relative 1e-9); choices need the
same letter set; multi-part answers need the same number of parts, matched by label when both sides
use the same labels and by position otherwise. The relation is symmetric but, because of the
tolerance, not transitive: :func:`vote` therefore clusters against each cluster's first member.

``render(canonical)`` gives the grading-standard form (Debate §3.3.1 iii): bare option letters, the
exact value in SI units (angles stay in degrees when given in degrees) in standard LaTeX.
"""

from __future__ import annotations

import cmath
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    # sympy is imported inside the functions that need it at run time (render, _parse_latex_cached,
    # _expression_equals_number): it costs ~0.5 s and the URL conf imports this module (debate views →
    # scoring), and loading the URL conf or a manage.py command imports no sympy
    # (tests/evaluation/test_metrics_cli.py).
    import pint
    import sympy

Kind = Literal["empty", "choice", "quantity", "expression", "multi", "text"]

DEFAULT_REL_TOL = 1e-2
MAX_ANSWER_CHARS = 2_000  # longer answers are not parsed (bounded time); they stay ``text``
MAX_SYMBOLIC_CHARS = 300
_EXPRESSION_REL_TOL = 1e-9

# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Quantity:
    """A value in SI base units.

    ``components`` is ``(("", v),)`` for a scalar and ``(("i", x), ("j", y), ...)`` for a vector
    written with unit vectors. ``dimensions`` is the sorted pint dimensionality plus ``[angle]``;
    ``()`` is dimensionless. ``in_degrees`` remembers that an angle was written in degrees.
    """

    components: tuple[tuple[str, float], ...]
    dimensions: tuple[tuple[str, float], ...]
    in_degrees: bool = False

    @property
    def is_vector(self) -> bool:
        return self.components[0][0] != ""

    @property
    def norm(self) -> float:
        return math.sqrt(sum(value * value for _, value in self.components))


@dataclass(frozen=True)
class Part:
    """One part of a multi-part answer; ``label`` is ``"a"``, a quantity name (``v_A``) or ``""``."""

    label: str
    value: Canonical


@dataclass(frozen=True)
class Canonical:
    """A parsed answer. Exactly the fields of its ``kind`` are set (see the module docstring)."""

    raw: str
    kind: Kind
    text: str
    letters: tuple[str, ...] = ()
    quantity: Quantity | None = None
    expression: sympy.Expr | None = None
    parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Vote:
    """Outcome of value-equivalence voting over ``n`` answers.

    ``clusters`` holds answer indices; ``cluster_of[i]`` is answer i's cluster (``None`` for an
    empty answer). ``majority`` is the cluster holding more than half of *all* ``n`` answers, or
    ``None``. ``leader`` is the plurality cluster after the tie-break (see :func:`vote`), ``None``
    only when every answer is empty. ``winner`` is the index of the answer that represents the
    majority cluster (or ``None``); ``canonical``/``rendered`` describe it.
    """

    n: int
    clusters: tuple[tuple[int, ...], ...]
    cluster_of: tuple[int | None, ...]
    majority: int | None
    leader: int | None
    winner: int | None
    canonical: Canonical | None
    rendered: str | None

    @property
    def has_majority(self) -> bool:
        return self.majority is not None


# --------------------------------------------------------------------------------------------
# Public API


def canonicalize(answer: str) -> Canonical:
    """Parse one answer. Never raises; unparseable input becomes ``kind="text"``."""
    raw = answer if isinstance(answer, str) else str(answer)
    text = _fold(raw)
    if len(raw) > MAX_ANSWER_CHARS:
        return Canonical(raw=raw, kind="text", text=text)
    body = _strip_wrappers(raw)
    if not body:
        return Canonical(raw=raw, kind="empty", text="")
    letters = _parse_choice(body)
    if letters:
        return Canonical(raw=raw, kind="choice", text=text, letters=letters)
    parts = _split_parts(body)
    if len(parts) == 1:
        return _with_raw(parts[0].value, raw)
    return Canonical(raw=raw, kind="multi", text=text, parts=tuple(parts))


def same_value(a: str, b: str, *, rel_tol: float = DEFAULT_REL_TOL) -> bool:
    """True when the two answers have the same physical value (symmetric; see module docstring)."""
    return canonical_equal(canonicalize(a), canonicalize(b), rel_tol=rel_tol)


def canonical_equal(a: Canonical, b: Canonical, *, rel_tol: float = DEFAULT_REL_TOL) -> bool:
    """:func:`same_value` on already-parsed answers."""
    if a.kind == "empty" or b.kind == "empty":
        return False
    if a.text == b.text:
        return True
    if {a.kind, b.kind} == {"expression", "quantity"}:
        return _expression_equals_number(
            a if a.kind == "expression" else b, b if a.kind == "expression" else a
        )
    if a.kind != b.kind:
        return False
    if a.kind == "choice":
        return a.letters == b.letters
    if a.kind == "quantity":
        return _quantities_equal(cast(Quantity, a.quantity), cast(Quantity, b.quantity), rel_tol)
    if a.kind == "expression":
        return _expressions_equal(a.expression, b.expression)
    if a.kind == "multi":
        return _parts_equal(a.parts, b.parts, rel_tol)
    return False  # text: only the identical text (checked above) is equal


def vote(
    answers: Sequence[str],
    *,
    rel_tol: float = DEFAULT_REL_TOL,
    priority: Sequence[int] | None = None,
    by_value: bool = True,
) -> Vote:
    """Value-equivalence voting with a strict majority and a deterministic tie-break.

    Answers are taken in ``priority`` order (default: input order); each joins the first cluster
    whose first member it equals (:func:`canonical_equal`, or the folded text when ``by_value`` is
    False, the string-voting ablation), otherwise it starts a new cluster. Empty answers join
    nothing but still count in ``n``, so 2 of 3 is a majority and 1 of 2 is not.

    Tie-break for the plurality ``leader``: the largest cluster; among equals, the one whose first
    member comes earliest in ``priority`` (i.e. the cluster of the most trusted solver). The
    representative of a cluster is likewise its first member in ``priority`` order.
    """
    order = list(priority) if priority is not None else list(range(len(answers)))
    if sorted(order) != list(range(len(answers))):
        raise ValueError("priority must be a permutation of the answer indices")
    parsed = [canonicalize(answer) for answer in answers]
    clusters: list[list[int]] = []
    for index in order:
        if parsed[index].kind == "empty":
            continue
        for cluster in clusters:
            if _vote_equal(parsed[cluster[0]], parsed[index], rel_tol, by_value):
                cluster.append(index)
                break
        else:
            clusters.append([index])
    cluster_of: list[int | None] = [None] * len(answers)
    for number, cluster in enumerate(clusters):
        for index in cluster:
            cluster_of[index] = number
    leader = max(range(len(clusters)), key=lambda c: (len(clusters[c]), -c), default=None)
    majority = leader if leader is not None and 2 * len(clusters[leader]) > len(answers) else None
    winner = clusters[majority][0] if majority is not None else None
    canonical = parsed[winner] if winner is not None else None
    return Vote(
        n=len(answers),
        clusters=tuple(tuple(cluster) for cluster in clusters),
        cluster_of=tuple(cluster_of),
        majority=majority,
        leader=leader,
        winner=winner,
        canonical=canonical,
        rendered=render(canonical) if canonical is not None else None,
    )


def render(canonical: Canonical) -> str:
    """Grading-standard form: bare letters, SI value in standard LaTeX, parts ``(a) …; (b) …``."""
    if canonical.kind == "choice":
        return "".join(canonical.letters)
    if canonical.kind == "quantity":
        return _render_quantity(cast(Quantity, canonical.quantity))
    if canonical.kind == "expression":
        import sympy  # lazily: see the TYPE_CHECKING imports at the top

        latex: str = sympy.latex(canonical.expression)
        return latex
    if canonical.kind == "multi":
        return "; ".join(_render_part(part) for part in canonical.parts)
    return _strip_wrappers(canonical.raw)


# --------------------------------------------------------------------------------------------
# Surface clean-up


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _with_raw(canonical: Canonical, raw: str) -> Canonical:
    return Canonical(
        raw=raw,
        kind=canonical.kind,
        text=_fold(raw) if canonical.kind != "empty" else "",
        letters=canonical.letters,
        quantity=canonical.quantity,
        expression=canonical.expression,
        parts=canonical.parts,
    )


_WRAPPER_PATTERNS = (
    re.compile(r"^\\boxed\s*\{(.*)\}$", re.S),
    re.compile(r"^\\\((.*)\\\)$", re.S),
    re.compile(r"^\\\[(.*)\\\]$", re.S),
    re.compile(r"^\*\*(.*)\*\*$", re.S),
    re.compile(r"^`(.*)`$", re.S),
)


def _strip_wrappers(text: str) -> str:
    """Remove surrounding whitespace, ``$``, ``\\boxed{}``, markdown bold and a final period."""
    body = text.strip()
    while True:
        before = body
        if len(body) >= 2 and body[0] == "$" and body[-1] == "$":
            body = body.strip("$").strip()
        for pattern in _WRAPPER_PATTERNS:
            match = pattern.match(body)
            if match and _balanced(match.group(1)):
                body = match.group(1).strip()
        body = re.sub(r"(?<![.\d])\.$", "", body).strip()
        if body == before:
            return body


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "{") - (char == "}")
        if depth < 0:
            return False
    return depth == 0


# --------------------------------------------------------------------------------------------
# Multiple choice

_CHOICE_SINGLE = re.compile(
    r"^(?:(?:option|choice|answer)\s*[:\-]?\s*)?"
    r"(?:\\text\{|\\mathrm\{)?\(?\s*([A-Ha-h])\s*\)?\}?\s*[.:)]?$",
    re.I,
)
_CHOICE_WITH_TEXT = re.compile(r"^(?:(?:option|choice)\s*)?\(?([A-H])\)?[.:)]\s+\S", re.I)
_CHOICE_LIST = re.compile(
    r"^(?:(?:options|choices|answers?)\s*[:\-]?\s*)?\(?[A-H]\)?(?:\s*(?:,|and|&|\s)\s*\(?[A-H]\)?)+$"
)
_CHOICE_RUN = re.compile(r"^[A-H]{2,8}$")


def _parse_choice(body: str) -> tuple[str, ...]:
    """Option letters, upper-cased and sorted, or ``()`` when the answer is not a bare choice.

    ``b`` alone is a choice; ``(a) 4.4 N`` (lower case with content) is a part label, not a choice;
    ``(B) 4.4 N`` / ``Option B: 4.4 N`` pick option B.
    """
    compact = body.replace("$", "").strip()
    single = _CHOICE_SINGLE.match(compact)
    if single:
        return (single.group(1).upper(),)
    if _CHOICE_LIST.match(compact) or _CHOICE_RUN.match(compact):
        letters = re.findall(r"[A-H]", re.sub(r"(?i)^(options|choices|answers?)|\band\b", "", compact))
        if len(set(letters)) == len(letters):
            return tuple(sorted(letters))
    with_text = _CHOICE_WITH_TEXT.match(compact)
    if with_text and (with_text.group(1).isupper() or compact.lower().startswith(("option", "choice"))):
        return (with_text.group(1).upper(),)
    return ()


# --------------------------------------------------------------------------------------------
# Multi-part answers

_PART_MARKER = re.compile(r"(?:^|(?<=[\s;,]))\(?([a-h])[.)](?=[\s$\d\\(-])")


def _split_parts(body: str) -> list[Part]:
    """Split on part markers ``a.``/``(a)``, else ``;``/new lines, else commas and ``and``.

    Separators inside braces are ignored. A comma or ``and`` split is kept only when every piece
    parses to a value (not ``text``), so ``3.8 km east, 2.0 km`` does not become parts.
    """
    body = _common_latex_cleanup(body.replace("$", ""), keep_newlines=True)
    markers = list(_PART_MARKER.finditer(body))
    if markers and markers[0].start() == 0 and len({m.group(1) for m in markers}) == len(markers):
        marked: list[tuple[str, str]] = []
        for marker, following in zip(markers, [*markers[1:], None], strict=True):
            end = following.start() if following else len(body)
            marked.append((marker.group(1), body[marker.end() : end].strip(" \t\n;,")))
        return [_labelled_part(piece, label) for label, piece in marked]
    pieces = _split_top_level(body, ";\n")
    if len(pieces) > 1:
        return [_labelled_part(piece) for piece in pieces]
    pieces = _split_top_level(body, ",", and_word=True)
    if len(pieces) > 1:
        parts = [_labelled_part(piece) for piece in pieces]
        if all(part.value.kind not in ("text", "empty") for part in parts):
            return parts
    return [_labelled_part(body)]


def _split_top_level(text: str, separators: str, *, and_word: bool = False) -> list[str]:
    pieces: list[str] = []
    depth = start = 0
    index = 0
    while index < len(text):
        char = text[index]
        depth += (char in "{(") - (char in "})")
        cut = 0
        if depth == 0 and char in separators:
            next_char = text[index + 1 : index + 2]
            if char != "," or not next_char.isdigit():  # 4,43 is a decimal comma, not a separator
                cut = 1
        elif depth == 0 and and_word and text[index : index + 5].lower() == " and ":
            cut = 5
        if cut:
            pieces.append(text[start:index])
            start = index + cut
            index += cut
            continue
        index += 1
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _labelled_part(piece: str, label: str = "") -> Part:
    """One part: a chain ``x = vt = 1.57 m`` keeps the last right-hand side, labelled ``x``."""
    sides = [side.strip() for side in re.split(r"=|\\approx|≈", piece)]
    if len(sides) > 1 and all(sides):
        label = label or _normal_label(sides[0])
        piece = sides[-1]
    return Part(label=label, value=_canonicalize_value(piece))


def _normal_label(lhs: str) -> str:
    name = re.sub(r"\\(?:vec|mathbf|overrightarrow)\s*\{([^{}]*)\}", r"\1", lhs)
    name = re.sub(r"[{}\\\s]", "", name)
    return name if len(name) <= 20 else ""


# --------------------------------------------------------------------------------------------
# One value: quantity, expression or text


def _canonicalize_value(piece: str) -> Canonical:
    body = _strip_wrappers(piece)
    text = _fold(piece)
    if not body:
        return Canonical(raw=piece, kind="empty", text="")
    body = _drop_explanatory_parentheses(body)
    quantity = _parse_quantity(body)
    if quantity is not None:
        return Canonical(raw=piece, kind="quantity", text=text, quantity=quantity)
    expression = _parse_expression(body)
    if expression is not None:
        if not expression.free_symbols:
            number = _real_number(expression)
            if number is not None:
                quantity = Quantity(components=(("", number),), dimensions=())
                return Canonical(raw=piece, kind="quantity", text=text, quantity=quantity)
        else:
            return Canonical(raw=piece, kind="expression", text=text, expression=expression)
    return Canonical(raw=piece, kind="text", text=text)


def _drop_explanatory_parentheses(body: str) -> str:
    """``4.43 m/s^2 (mass 1 accelerates up the ramp)`` → ``4.43 m/s^2``: prose in parentheses."""
    return re.sub(r"\s*\([^()]*[A-Za-z]{3,}\s+[A-Za-z]{2,}[^()]*\)\s*$", "", body).strip() or body


def _real_number(expression: sympy.Expr) -> float | None:
    try:
        value = complex(expression.evalf(15))
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return None
    if value.imag != 0 or not math.isfinite(value.real):
        return None
    return value.real


# --------------------------------------------------------------------------------------------
# Quantities (pint)


@cache
def _registry() -> pint.UnitRegistry:
    import pint

    return pint.UnitRegistry(autoconvert_offset_to_baseunit=True)


_TEXT_COMMAND = re.compile(
    r"\\(?:text|mathrm|textrm|rm|mbox|textit|operatorname|textnormal)\s*\{((?:[^{}]|\{[^{}]*\})*)\}"
)


def _unwrap_text_commands(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _TEXT_COMMAND.sub(r"\1", text)
    return text


def _common_latex_cleanup(text: str, *, keep_newlines: bool = False) -> str:
    """Spacing, sizing and text wrappers out; decimal commas and unicode minus normalized.

    ``{\\text{m/s}}^2`` is read as m/s², the textbook typesetting convention, not (m/s)².
    """
    text = re.sub(r"\{\s*\\(?:text|mathrm)\s*\{([^{}/]+)/([^{}/]+)\}\s*\}\s*\^", r"\1/\2^", text)
    text = _unwrap_text_commands(text)
    text = re.sub(r"\\(?:left|right|displaystyle|big|Big|bigg|Bigg)(?![A-Za-z])", "", text)
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    text = re.sub(r"\\[,;: ]|~|\\q?quad(?![A-Za-z])", " ", text)
    text = text.replace("\\!", "").replace("−", "-").replace("–", "-").replace("{,}", "")
    text = re.sub(
        r"(?<![\d.])([1-9]\d{0,2}(?:,\d{3})+)(?![\d,])", lambda m: m.group(1).replace(",", ""), text
    )
    text = re.sub(r"(\d),(\d)", r"\1.\2", text)
    if keep_newlines:
        return "\n".join(" ".join(line.split()) for line in text.splitlines())
    return " ".join(text.split())


_UNIT_VECTOR = re.compile(
    r"\\(?:hat|vec|mathbf|boldsymbol)\s*\{?\s*(?:\\(?:mathbf|hat)\s*\{\s*)?\\?([ijkxyz]|imath|jmath)\s*\}?\s*\}?|([îĵ])"
)
_AXIS = {
    "i": "i",
    "x": "i",
    "imath": "i",
    "î": "i",
    "j": "j",
    "y": "j",
    "jmath": "j",
    "ĵ": "j",
    "k": "k",
    "z": "k",
}


def _to_plain_units(text: str) -> str:
    """LaTeX → a plain string pint can read: ``{\\text{m/s}}^2`` → ``m/s^2``, ``\\mu F`` → ``µF``."""
    text = _common_latex_cleanup(text)
    text = _UNIT_VECTOR.sub(lambda m: f" @{_AXIS[m.group(1) or m.group(2)]} ", text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"((\1)/(\2))", text)
    text = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|º|˚", "°", text)
    text = re.sub(r"\\mu\s*(?=[A-Za-z])", "µ", text)
    text = re.sub(r"\\Omega|\\ohm|Ω", "Ω", text)
    text = re.sub(r"\\times|\\cdot|\\ast|[×·⋅∙]", "*", text)
    text = text.replace("\\%", "%").replace("{", "(").replace("}", ")")
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\(\s*([-+]?\d+(?:\.\d+)?)\s*\)", r"\1", text)
        text = re.sub(r"\(\s*\)", "", text)
    return " ".join(text.split())


_NUMBER = (
    r"(?:[-+]\s*)?(?:"
    r"10\s*\^\s*[-+]?\s*\d+(?!\s*[.\d])"  # 10^-3
    r"|(?:\d+(?:\.\d*)?|\.\d+)(?:\s*[eE]\s*[-+]?\d+|\s*[*xX]\s*10\s*\^\s*[-+]?\s*\d+)?"
    r")"
)
_SCALAR = re.compile(rf"^(?P<number>{_NUMBER})\s*(?P<unit>[^\d\s.,].*)?$")
_VECTOR_COMPONENT = re.compile(rf"\s*(?P<sign>[-+])?\s*(?P<number>{_NUMBER})?\s*\*?\s*@(?P<axis>[ijk])\s*")
_UNIT_CHARS = re.compile(r"^[A-Za-zµμΩ°%/*^()\s\d.\-²³⁻¹·]+$")
_UNIT_ALIASES = (
    (re.compile(r"°\s*C\b"), "degC"),
    (re.compile(r"°\s*F\b"), "degF"),
    (re.compile(r"°"), " deg "),
    (re.compile(r"\bNm\b"), "N*m"),
    (re.compile(r"\bohms?\b"), "ohm"),
    (re.compile(r"\bsec\b"), "s"),
    (re.compile(r"%"), " percent "),
)


def _parse_number(text: str) -> float | None:
    compact = re.sub(r"\s+", "", text).replace("X", "x")
    match = re.fullmatch(r"([-+]?)10\^([-+]?\d+)", compact)
    if match:
        exponent = int(match.group(2))
        return None if abs(exponent) > 400 else float(f"{match.group(1)}1e{exponent}")
    match = re.fullmatch(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([-+]?\d+)|[*x]10\^([-+]?\d+))?", compact)
    if not match:
        return None
    exponent_text = match.group(2) or match.group(3) or "0"
    if abs(int(exponent_text)) > 400:
        return None
    value = float(f"{match.group(1)}e{exponent_text}")
    return value if math.isfinite(value) else None


def _parse_units(unit_text: str) -> pint.Unit | None:
    """pint units for ``unit_text`` (``""`` → dimensionless) or ``None``. No digits outside exponents."""
    unit_text = unit_text.strip()
    if not unit_text:
        return _registry().dimensionless
    if not _UNIT_CHARS.match(unit_text) or re.search(r"(?<![\^*\-])\b\d", unit_text):
        return None
    for pattern, replacement in _UNIT_ALIASES:
        unit_text = pattern.sub(replacement, unit_text)
    unit_text = " ".join(unit_text.split())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _registry().parse_units(unit_text)
    except Exception:  # pint raises many error types on arbitrary input; all mean "not units"
        return None


def _parse_quantity(body: str) -> Quantity | None:
    plain = _to_plain_units(body)
    if "@" in plain:
        return _parse_vector(plain)
    match = _SCALAR.match(plain)
    if not match:
        return None
    number = _parse_number(match.group("number"))
    units = _parse_units(match.group("unit") or "")
    if number is None or units is None:
        return None
    return _si_quantity((("", number),), units)


def _parse_vector(plain: str) -> Quantity | None:
    last_axis = plain.rfind("@") + 2
    body, unit_text = plain[:last_axis], plain[last_axis:].strip()
    if unit_text.startswith(")") and body.lstrip().startswith("("):
        body, unit_text = body.lstrip()[1:], unit_text[1:]
    position, components = 0, {"i": 0.0, "j": 0.0, "k": 0.0}
    for match in _VECTOR_COMPONENT.finditer(body):
        if match.start() != position:
            return None
        number = _parse_number(match.group("number")) if match.group("number") else 1.0
        if number is None:
            return None
        components[match.group("axis")] += -number if match.group("sign") == "-" else number
        position = match.end()
    units = _parse_units(unit_text)
    if position != len(body) or units is None:
        return None
    return _si_quantity(tuple(components.items()), units)


def _si_quantity(components: tuple[tuple[str, float], ...], units: pint.Unit) -> Quantity | None:
    registry = _registry()
    try:
        if len(components) == 1:
            base = registry.Quantity(components[0][1], units).to_base_units()
            values: tuple[tuple[str, float], ...] = (("", float(base.magnitude)),)
        else:
            base = registry.Quantity(1.0, units).to_base_units()
            values = tuple((axis, value * float(base.magnitude)) for axis, value in components)
    except Exception:  # offset units inside compound units, vectors in °C, overflow …
        return None
    if not all(math.isfinite(value) for _, value in values):
        return None
    # pint types unit exponents as any scalar, complex included; a unit's exponents are real
    dimensions = {name: float(cast(float, power)) for name, power in base.dimensionality.items()}
    angle = float(cast(float, dict(base.unit_items()).get("radian", 0)))
    if angle:
        dimensions["[angle]"] = angle
    in_degrees = "degree" in str(units) and dimensions == {"[angle]": 1.0}
    return Quantity(components=values, dimensions=tuple(sorted(dimensions.items())), in_degrees=in_degrees)


def _quantities_equal(a: Quantity, b: Quantity, rel_tol: float) -> bool:
    if a.dimensions != b.dimensions or a.is_vector != b.is_vector:
        return False
    left, right = dict(a.components), dict(b.components)
    scale = rel_tol * max(a.norm, b.norm)
    return all(
        math.isclose(left.get(axis, 0.0), right.get(axis, 0.0), rel_tol=rel_tol, abs_tol=scale)
        for axis in sorted(left.keys() | right.keys())
    )


# --------------------------------------------------------------------------------------------
# Symbolic expressions (sympy's LaTeX parser, ANTLR backend)

_GREEK = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
    "varpi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi "
    "Psi Omega"
).split()
_FUNCTIONS = "sin cos tan sec csc cot arcsin arccos arctan sinh cosh tanh ln log exp sqrt".split()
_KNOWN_WORDS = set(_GREEK) | set(_FUNCTIONS)
_STOP_WORDS = {"yes", "no", "none", "true", "false", "and", "or", "the", "not", "is", "of", "to", "in", "at"}
_UNICODE_GREEK = dict(
    zip(
        "αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΦΨΩ",
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
        "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split(),
        strict=True,
    )
)
_FORBIDDEN = re.compile(r"!|\\(?:int|sum|prod|lim|binom|choose|mathcal|infty|begin|end)(?![A-Za-z])")


def _looks_like_prose(text: str) -> bool:
    """Words such as ``clockwise`` or ``yes`` mean prose, not a product of single-letter symbols."""
    bare = re.sub(r"\\[A-Za-z]+", " ", text)
    bare = re.sub(r"_\{[^{}]*\}|_[A-Za-z0-9]", " ", bare)
    for word in re.findall(r"[A-Za-z]+", bare):
        if word.lower() in _STOP_WORDS or (len(word) >= 4 and word not in _KNOWN_WORDS):
            return True
    return False


def _to_sympy_latex(body: str) -> str | None:
    text = _common_latex_cleanup(body)
    if len(text) > MAX_SYMBOLIC_CHARS or _FORBIDDEN.search(text) or _looks_like_prose(text):
        return None
    if not _safe_exponents(text):
        return None
    text = "".join(f"\\{_UNICODE_GREEK[c]} " if c in _UNICODE_GREEK else c for c in text)
    words = "|".join(sorted(_KNOWN_WORDS, key=len, reverse=True))
    text = re.sub(rf"(?<![\\A-Za-z])({words})(?![A-Za-z])", r"\\\1 ", text)
    text = text.replace("**", "^").replace("·", r"\cdot ").replace("×", r"\times ")
    text = re.sub(r"(\d)\s*[eE]\s*([-+]?\d+)(?![A-Za-z])", r"\1\\times10^{\2}", text)
    return text


def _safe_exponents(text: str) -> bool:
    """Refuse power towers and huge integer exponents, which would make sympy run for ever."""
    for match in re.finditer(r"\^|\*\*", text):
        exponent = _exponent_after(text, match.end())
        if "^" in exponent or "**" in exponent:
            return False
        if any(int(digits) > 400 for digits in re.findall(r"\d+", exponent)):
            return False
    return not re.search(r"\d{40,}", text)


def _exponent_after(text: str, start: int) -> str:
    """The exponent group after ``^``: a balanced ``{…}``/``(…)`` group, a command or one token."""
    rest = text[start:].lstrip()
    if rest[:1] in ("{", "("):
        closing, depth = {"{": "}", "(": ")"}[rest[0]], 0
        for index, char in enumerate(rest):
            depth += (char == rest[0]) - (char == closing)
            if depth == 0:
                return rest[: index + 1]
        return rest
    match = re.match(r"\\[A-Za-z]+|[-+]?\d+|\S", rest)
    return match.group(0) if match else ""


@lru_cache(maxsize=4096)
def _parse_latex_cached(latex: str) -> sympy.Expr | None:
    import sympy  # lazily: see the TYPE_CHECKING imports at the top
    from sympy.parsing.latex import parse_latex

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expression = parse_latex(latex)
    except Exception:  # LaTeXParsingError, and sympy's own errors on odd trees
        return None
    if not isinstance(expression, sympy.Expr):
        return None
    return expression.subs(sympy.Symbol("pi"), sympy.pi)


def _parse_expression(body: str) -> sympy.Expr | None:
    latex = _to_sympy_latex(body)
    return _parse_latex_cached(latex) if latex else None


_SAMPLES = (0.6180339887, 1.4142135624, 0.8660254038, 1.7320508076, 1.2345678901, 0.3183098862, 2.7182818285)


def _expressions_equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Equal at ≥3 of 5 deterministic sample points and never different at a finite point."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    agreeing = 0
    for point in range(5):
        subs = {
            symbol: _SAMPLES[(point + 2 * n) % len(_SAMPLES)] + 0.1 * n for n, symbol in enumerate(symbols)
        }
        left, right = _evaluate(a, subs), _evaluate(b, subs)
        if left is None or right is None:
            continue
        if not cmath.isclose(left, right, rel_tol=_EXPRESSION_REL_TOL, abs_tol=1e-12):
            return False
        agreeing += 1
    return agreeing >= 3


def _expression_equals_number(expression: Canonical, number: Canonical) -> bool:
    """``\\sin^2\\theta+\\cos^2\\theta`` equals ``1``: only dimensionless scalars qualify."""
    quantity = cast(Quantity, number.quantity)  # the quantity side of an expression/quantity pair
    if quantity.dimensions or quantity.is_vector:
        return False
    import sympy  # lazily: see the TYPE_CHECKING imports at the top

    return _expressions_equal(expression.expression, sympy.Float(quantity.components[0][1]))


def _evaluate(expression: sympy.Expr, subs: dict[sympy.Symbol, float]) -> complex | None:
    try:
        value = complex(expression.evalf(15, subs=subs))
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return None
    return value if cmath.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Multi-part comparison


def _parts_equal(a: tuple[Part, ...], b: tuple[Part, ...], rel_tol: float) -> bool:
    if len(a) != len(b):
        return False
    labels_a, labels_b = [p.label for p in a], [p.label for p in b]
    if all(labels_a) and len(set(labels_a)) == len(a) and set(labels_a) == set(labels_b):
        by_label = {part.label: part for part in b}
        pairs = [(part, by_label[part.label]) for part in a]
    else:
        pairs = list(zip(a, b, strict=True))
    return all(canonical_equal(x.value, y.value, rel_tol=rel_tol) for x, y in pairs)


def _vote_equal(a: Canonical, b: Canonical, rel_tol: float, by_value: bool) -> bool:
    return canonical_equal(a, b, rel_tol=rel_tol) if by_value else a.text == b.text


# --------------------------------------------------------------------------------------------
# Rendering

_BASE_SYMBOLS = (
    ("[mass]", "kg"),
    ("[length]", "m"),
    ("[time]", "s"),
    ("[current]", "A"),
    ("[temperature]", "K"),
    ("[substance]", "mol"),
    ("[luminosity]", "cd"),
    ("[angle]", "rad"),
)


def _dims(**powers: float) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((f"[{name}]", float(power)) for name, power in powers.items()))


_DERIVED = {
    _dims(mass=1, length=1, time=-2): "N",
    _dims(mass=1, length=2, time=-2): "J",
    _dims(mass=1, length=2, time=-3): "W",
    _dims(mass=1, length=-1, time=-2): "Pa",
    _dims(current=1, time=1): "C",
    _dims(mass=1, length=2, time=-3, current=-1): "V",
    _dims(mass=1, length=2, time=-3, current=-2): r"\Omega",
    _dims(mass=-1, length=-2, time=4, current=2): "F",
    _dims(mass=1, time=-2, current=-1): "T",
    _dims(mass=1, length=2, time=-2, current=-1): "Wb",
    _dims(mass=1, length=2, time=-2, current=-2): "H",
    _dims(time=-1): "Hz",
}


def _unit_latex(dimensions: tuple[tuple[str, float], ...]) -> str:
    if not dimensions:
        return ""
    if dimensions in _DERIVED:
        return rf"\mathrm{{{_DERIVED[dimensions]}}}"
    powers = dict(dimensions)
    factors = [(symbol, powers.pop(name)) for name, symbol in _BASE_SYMBOLS if name in powers]
    factors += sorted(powers.items())  # dimensions pint knows but SI does not (rare)
    numerator = [_power(symbol, p) for symbol, p in factors if p > 0]
    denominator = [_power(symbol, -p) for symbol, p in factors if p < 0]
    if len(denominator) == 1:
        body = r"\,".join(numerator or ["1"]) + "/" + denominator[0]
    else:
        body = r"\,".join([*numerator, *(_power(symbol, p) for symbol, p in factors if p < 0)])
    return rf"\mathrm{{{body}}}"


def _power(symbol: str, power: float) -> str:
    exponent = int(power) if float(power).is_integer() else power
    return symbol if exponent == 1 else f"{symbol}^{{{exponent}}}"


def _format_number(value: float) -> str:
    """Nine significant digits, float noise removed; scientific LaTeX outside [1e-3, 1e6)."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if -3 <= exponent < 6:
        return f"{value:.9g}"
    mantissa = f"{value / 10**exponent:.9g}"
    if mantissa in ("10", "-10"):  # rounding carried into the next decade
        mantissa, exponent = mantissa[:-1], exponent + 1
    return rf"{mantissa}\times10^{{{exponent}}}"


def _render_quantity(quantity: Quantity) -> str:
    if quantity.in_degrees:
        degrees = quantity.components[0][1] * 180 / math.pi
        return rf"{_format_number(degrees)}^\circ"
    unit = _unit_latex(quantity.dimensions)
    if quantity.is_vector:
        terms = [f"{_format_number(v)}\\hat{{{axis}}}" for axis, v in quantity.components if v != 0]
        value = "+".join(terms).replace("+-", "-") or "0"
        return rf"({value})\,{unit}" if unit else value
    value = _format_number(quantity.components[0][1])
    return rf"{value}\,{unit}" if unit else value


def _render_part(part: Part) -> str:
    value = render(part.value)
    if re.fullmatch(r"[a-h]", part.label):
        return f"({part.label}) {value}"
    if part.label:
        return f"{part.label} = {value}"
    return value
