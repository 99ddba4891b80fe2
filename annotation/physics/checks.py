"""The physics checker: what a pass document says about physics, checked against the rule table. Pure: no Django.

``check_document(pass_no, document, earlier=..., question=..., stem=...)`` returns every :class:`Finding` in a
Pass 3 or Pass 4 document (Passes 1, 2 and 5 hold no quantities and no query target: none), sorted by path.
The rules are data (``rules.json``, versioned): each kind's allowed dimensions (read through pint), its owner
types, its value check; the question's phrases and the kinds they ask for. The codes (one per rule):

* ``PHYS_UNIT_DIMENSION``: a quantity's unit has none of its kind's dimensions (a force in J).
* ``PHYS_UNIT_MISSING``: a numeric value with no unit for a kind that has a dimension.
* ``PHYS_UNIT_PARSE`` / ``PHYS_VALUE_PARSE``: a unit pint cannot read; a value that is no number and no symbol.
* ``PHYS_VALUE_RANGE``: a negative mass, a zero period, a negative resistance ….
* ``PHYS_LABEL_AGREEMENT``: the quantity anchors a text glyph that prints another value or dimension.
* ``PHYS_OWNER_TYPE``: the owner's entity type cannot carry the kind (a mass owned by a force).
* ``PHYS_QUERY_KIND``: the question asks for a tension and the query target's kind is an energy.

What the checker cannot read (a malformed document, a kind the table does not know, a missing earlier pass, an
owner id that is not in the document) it skips: the validator reports shape problems.

Where records come from: Pass 3's quantities and query target; owners from Pass 2's ``physical_nodes`` updated by
Pass 3's ``new_or_updated_physical_nodes``; labels from Pass 1's ``visual_nodes``. Pass 4 holds all of them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from annotation.physics import units as unit_parsing
from annotation.physics.units import Unit

RULES_PATH: Path = Path(__file__).with_name("rules.json")

PHYS_UNIT_DIMENSION = "PHYS_UNIT_DIMENSION"
PHYS_UNIT_MISSING = "PHYS_UNIT_MISSING"
PHYS_UNIT_PARSE = "PHYS_UNIT_PARSE"
PHYS_VALUE_PARSE = "PHYS_VALUE_PARSE"
PHYS_VALUE_RANGE = "PHYS_VALUE_RANGE"
PHYS_LABEL_AGREEMENT = "PHYS_LABEL_AGREEMENT"
PHYS_OWNER_TYPE = "PHYS_OWNER_TYPE"
PHYS_QUERY_KIND = "PHYS_QUERY_KIND"

# A relative tolerance on top of the printed digits' rounding, for binary floating point and unit factors.
_RELATIVE_EPSILON = 1e-9


# --------------------------------------------------------------------------------------------
# The rule table


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    description: str


@dataclass(frozen=True)
class Dimension:
    name: str
    unit: str  # a reference unit pint reads ("" for a pure number)
    label: str  # for messages: "a force (N)"
    dimensionality: str


@dataclass(frozen=True)
class ValueCheck:
    name: str
    minimum: float
    inclusive: bool
    label: str

    def accepts(self, value: float) -> bool:
        return value >= self.minimum if self.inclusive else value > self.minimum


@dataclass(frozen=True)
class KindRule:
    name: str
    dimensions: tuple[str, ...]  # names in RuleSet.dimensions
    owner_types: frozenset[str] | None  # None: any owner
    value_check: str | None


@dataclass(frozen=True)
class QuestionLanguage:
    cues: re.Pattern[str]
    direct: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]  # phrase → dimension names
    terms: re.Pattern[str]  # kind terms, longest first
    term_kinds: Mapping[str, str]  # lowercased term → kind
    head_last: bool  # Chinese: the head noun closes the phrase (求通过电阻R1的电流 → 电流)


@dataclass(frozen=True)
class RuleSet:
    version: str
    rules: tuple[Rule, ...]
    dimensions: Mapping[str, Dimension] = field(default_factory=dict)
    kinds: Mapping[str, KindRule] = field(default_factory=dict)
    synonyms: Mapping[str, str] = field(default_factory=dict)
    value_checks: Mapping[str, ValueCheck] = field(default_factory=dict)
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    suffix_pattern: re.Pattern[str] | None = None
    separators: tuple[str, ...] = ()
    head_nouns: frozenset[str] = frozenset()
    questions: tuple[QuestionLanguage, ...] = ()

    def rule(self, code: str) -> Rule:
        for rule in self.rules:
            if rule.code == code:
                return rule
        raise KeyError(code)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(rule.code for rule in self.rules)

    def kind(self, text: object) -> KindRule | None:
        """The rule of a free-text kind (``"Normal force"``, ``"angle_of_incline"``, ``"T_1 tension"``), or
        ``None`` when the table does not know it (then nothing is checked: the table never guesses)."""
        if not isinstance(text, str):
            return None
        return _kind_lookup(self, text)

    def dimension_names_of(self, unit: Unit) -> tuple[str, ...]:
        return tuple(
            name for name, dim in self.dimensions.items() if dim.dimensionality == unit.dimensionality
        )


def _normalise_kind(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"[\s\-./]+", "_", text)
    text = re.sub(r"[^\w]", "", text)
    return re.sub(r"_+", "_", text).strip("_")


def _kind_lookup(rules: RuleSet, text: str) -> KindRule | None:
    name = _normalise_kind(text)

    def known(candidate: str) -> KindRule | None:
        candidate = rules.synonyms.get(candidate, candidate)
        return rules.kinds.get(candidate)

    for _ in range(8):  # qualifiers peel off one at a time: "maximum_net_force_x" → "force"
        if not name:
            return None
        found = known(name)
        if found:
            return found
        stripped = _strip_qualifier(rules, name)
        if stripped == name:
            break
        name = stripped
    for separator in rules.separators:
        if separator in name:
            head = name.split(separator, 1)[0]
            found = known(head) or (known(_strip_all(rules, head)) if head else None)
            if found:
                return found
            name = head
    last = name.rsplit("_", 1)[-1]
    if last in rules.head_nouns:
        return known(last)
    return None


def _strip_qualifier(rules: RuleSet, name: str) -> str:
    for prefix in rules.prefixes:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    for suffix in rules.suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    if rules.suffix_pattern is not None:
        stripped = rules.suffix_pattern.sub("", name)
        if stripped:
            return stripped
    return name


def _strip_all(rules: RuleSet, name: str) -> str:
    for _ in range(8):
        stripped = _strip_qualifier(rules, name)
        if stripped == name:
            return name
        name = stripped
    return name


def _phrase_pattern(phrases: list[str], *, words: bool, plural: bool = False) -> re.Pattern[str]:
    """One pattern for the phrases, longest first; the phrase itself is the group ``term`` (English words may
    take a plural s: "tensions")."""
    ordered = sorted(set(phrases), key=lambda phrase: (-len(phrase), phrase))
    alternation = "|".join(re.escape(phrase).replace("\\ ", r"\s+") for phrase in ordered) or r"(?!x)x"
    if not words:
        return re.compile(f"(?P<term>{alternation})", re.IGNORECASE)
    suffix = "(?:e?s)?" if plural else ""
    return re.compile(rf"(?<![\w-])(?P<term>{alternation}){suffix}(?![\w-])", re.IGNORECASE)


def _question_language(
    data: Mapping[str, Any], kinds: Mapping[str, KindRule], synonyms: Mapping[str, str], *, english: bool
) -> QuestionLanguage:
    """A language's question phrases. English terms are every kind and synonym of the table written with spaces
    (but ``ignore_terms``: abbreviations and words too common to mean the kind) plus its own ``terms``."""
    terms: dict[str, str] = {}
    ignored = set(data.get("ignore_terms", ()))
    if english:
        for name in kinds:
            terms[name.replace("_", " ")] = name
        for synonym, target in synonyms.items():
            if len(synonym) >= 3 and synonym not in ignored:
                terms.setdefault(synonym.replace("_", " "), target)
    for term, target in data.get("terms", {}).items():
        terms[term.lower()] = target
    direct = tuple(
        (_phrase_pattern([phrase], words=english), tuple(dims))
        for phrase, dims in data.get("direct", {}).items()
    )
    return QuestionLanguage(
        cues=_phrase_pattern(list(data["cues"]), words=english),
        direct=direct,
        terms=_phrase_pattern(list(terms), words=english, plural=english),
        term_kinds=terms,
        head_last=not english,
    )


def _rule_set_from(data: Mapping[str, Any]) -> RuleSet:
    rules = tuple(Rule(item["code"], item["title"], item["description"]) for item in data["rules"])
    dimensions = {
        name: Dimension(name, item["unit"], item["label"], unit_parsing.dimensionality_of(item["unit"]))
        for name, item in data["dimensions"].items()
    }
    groups = {name: frozenset(types) for name, types in data["owner_groups"].items()}
    kinds = {
        name: KindRule(
            name,
            tuple(item["dimensions"]),
            groups[item["owners"]] if "owners" in item else None,
            item.get("value_check"),
        )
        for name, item in data["kinds"].items()
    }
    for kind in kinds.values():
        unknown = [name for name in kind.dimensions if name not in dimensions]
        if unknown:
            raise ValueError(f"Kind {kind.name!r} names unknown dimensions {unknown}.")
    value_checks = {
        name: ValueCheck(name, float(item["min"]), bool(item["min_inclusive"]), item["label"])
        for name, item in data["value_checks"].items()
    }
    qualifiers = data["kind_qualifiers"]
    synonyms = dict(data["kind_synonyms"])
    questions = data["questions"]
    return RuleSet(
        version=str(data["version"]),
        rules=rules,
        dimensions=dimensions,
        kinds=kinds,
        synonyms=synonyms,
        value_checks=value_checks,
        prefixes=tuple(qualifiers["prefixes"]),
        suffixes=tuple(qualifiers["suffixes"]),
        suffix_pattern=re.compile(qualifiers["suffix_pattern"]) if qualifiers.get("suffix_pattern") else None,
        separators=tuple(qualifiers["separators"]),
        head_nouns=frozenset(qualifiers["head_nouns"]),
        questions=tuple(
            _question_language(questions[language], kinds, synonyms, english=language == "en")
            for language in ("en", "zh")
            if language in questions
        ),
    )


@cache
def _default_rules() -> RuleSet:
    return _rule_set_from(json.loads(RULES_PATH.read_text(encoding="utf-8")))


def load_rules(path: Path = RULES_PATH) -> RuleSet:
    """The rule table at ``path`` (the shipped one by default, read once and cached)."""
    if Path(path) == RULES_PATH:
        return _default_rules()
    return _rule_set_from(json.loads(Path(path).read_text(encoding="utf-8")))


# --------------------------------------------------------------------------------------------
# Findings


@dataclass(frozen=True)
class Finding:
    code: str
    record_id: str
    path: str
    message: str
    rule: str

    def as_issue(self) -> dict[str, str]:
        return {
            "code": self.code,
            "path": self.path,
            "message": self.message,
            "record_id": self.record_id,
            "rule": self.rule,
        }


def _finding(code: str, record_id: str, path: str, message: str) -> Finding:
    return Finding(code=code, record_id=record_id, path=path, message=message, rule=code)


def _path_key(path: str) -> tuple[tuple[int, str | int], ...]:
    """Paths in document order: ``quantities[2]`` before ``quantities[10]``."""
    parts: list[tuple[int, str | int]] = []
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        parts.append((1, int(token[1:-1])) if token.startswith("[") else (0, token))
    return tuple(parts)


# --------------------------------------------------------------------------------------------
# The checker


def check_document(
    pass_no: int,
    document: dict[str, Any],
    *,
    earlier: dict[int, dict[str, Any]],
    question: str,
    stem: str = "",
    rules: RuleSet | None = None,
) -> list[Finding]:
    """Every physics finding of the Pass ``pass_no`` document, sorted by path (then code). Never raises on a
    malformed document or earlier pass: what cannot be read is not checked."""
    rules = rules or load_rules()
    if pass_no not in (3, 4) or not isinstance(document, dict):
        return []
    earlier = earlier if isinstance(earlier, dict) else {}
    if pass_no == 3:
        labels_source = earlier.get(1)
        nodes = _records(earlier.get(2), "physical_nodes") + _records(
            document, "new_or_updated_physical_nodes"
        )
    else:
        labels_source = document
        nodes = _records(document, "physical_nodes")
    glyphs = {
        node["id"]: node["text"]
        for node in _records(labels_source, "visual_nodes")
        if isinstance(node.get("id"), str)
        and node.get("type") == "text_glyph"
        and isinstance(node.get("text"), str)
    }
    owner_types: dict[str, str] = {}
    for node in nodes:  # later records (Pass 3's updates) win
        if isinstance(node.get("id"), str) and isinstance(node.get("type"), str):
            owner_types[node["id"]] = node["type"]
    findings: list[Finding] = []
    quantities = document.get("quantities")
    if isinstance(quantities, list):
        for index, quantity in enumerate(quantities):
            if isinstance(quantity, dict):
                findings.extend(_quantity_findings(rules, index, quantity, glyphs, owner_types))
    target = document.get("query_target")
    if isinstance(target, dict):
        findings.extend(_query_findings(rules, target, question))
    return sorted(findings, key=lambda finding: (_path_key(finding.path), finding.code))


def _records(document: object, key: str) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        return []
    records = document.get(key)
    if not isinstance(records, list):
        return []
    return [record for record in records if isinstance(record, dict)]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class _Reading:
    """One quantity as the checker reads it."""

    record_id: str
    at: str  # its path: "quantities[2]"
    kind_text: str
    kind: KindRule | None
    value_text: str
    value: unit_parsing.Value | None  # None: no value_latex string
    number: unit_parsing.Number | None  # the value as a number, when it is one
    unit_text: str
    unit: Unit | None  # the unit in force: the unit field's, or the value's own when the field is empty
    unit_readable: bool


def _read_quantity(rules: RuleSet, index: int, quantity: dict[str, Any]) -> _Reading:
    kind_text = (_text(quantity.get("kind")) or "").strip()
    value_text = _text(quantity.get("value_latex"))
    unit_text = _text(quantity.get("unit_latex")) or ""
    value = unit_parsing.parse_value(value_text) if value_text is not None else None
    unit = unit_parsing.parse_unit(unit_text)
    number = value.number if value is not None and value.status == "number" else None
    if number is not None and value is not None and value.unit is not None:
        if not unit_text.strip():
            unit = value.unit  # "5\,\mathrm{kg}" with an empty unit field
        else:
            number = None  # "2m" with the unit "kg": an expression (twice m), not a number and its unit
    return _Reading(
        record_id=_text(quantity.get("id")) or f"quantities[{index}]",
        at=f"quantities[{index}]",
        kind_text=kind_text,
        kind=rules.kind(kind_text),
        value_text=value_text or "",
        value=value,
        number=number,
        unit_text=unit_text,
        unit=unit,
        unit_readable=unit is not None,
    )


def _quantity_findings(
    rules: RuleSet,
    index: int,
    quantity: dict[str, Any],
    glyphs: Mapping[str, str],
    owner_types: Mapping[str, str],
) -> Iterator[Finding]:
    reading = _read_quantity(rules, index, quantity)
    yield from _parse_findings(reading)
    if reading.kind is not None and reading.unit is not None:
        yield from _dimension_findings(rules, reading, reading.kind, reading.unit)
    anchors = quantity.get("visual_anchor_ids")
    if isinstance(anchors, list):
        for position, anchor in enumerate(anchors):
            if isinstance(anchor, str) and anchor in glyphs:
                path = f"{reading.at}.visual_anchor_ids[{position}]"
                finding = _label_finding(rules, reading, path, anchor, glyphs[anchor])
                if finding is not None:
                    yield finding
    owner_id = _text(quantity.get("owner_id"))
    if reading.kind is not None and owner_id and owner_id in owner_types:
        finding = _owner_finding(reading, reading.kind, owner_id, owner_types[owner_id])
        if finding is not None:
            yield finding


def _parse_findings(reading: _Reading) -> Iterator[Finding]:
    if not reading.unit_readable:
        yield _finding(
            PHYS_UNIT_PARSE,
            reading.record_id,
            f"{reading.at}.unit_latex",
            f'The unit "{reading.unit_text}" of {reading.record_id} cannot be read as a unit (write it like '
            "m/s^2, \\mathrm{k\\Omega}, \\mu C or ^\\circ).",
        )
    if reading.value is not None and reading.value.status == "invalid":
        yield _finding(
            PHYS_VALUE_PARSE,
            reading.record_id,
            f"{reading.at}.value_latex",
            f'The value "{reading.value_text}" of {reading.record_id} is neither a number (like '
            "3.0\\times10^{8} or −4.0) nor a symbol; leave it empty when it is unknown.",
        )


def _dimension_findings(rules: RuleSet, reading: _Reading, kind: KindRule, unit: Unit) -> Iterator[Finding]:
    allowed = [rules.dimensions[name] for name in kind.dimensions]
    kind_name = kind.name.replace("_", " ")
    if unit.plain:
        if not any(dim.dimensionality == unit.dimensionality for dim in allowed):
            yield _finding(
                PHYS_UNIT_DIMENSION,
                reading.record_id,
                f"{reading.at}.unit_latex",
                f'{reading.record_id} is {_a(reading.kind_text)} but its unit "{reading.unit_text or unit.text}" '
                f"is a unit of {_dimension_label(rules, unit)}; {_a(kind_name)} needs a unit of {_labels(allowed)}.",
            )
            return  # a value range in the wrong unit says nothing more
    elif reading.number is not None and all(dim.unit for dim in allowed):
        yield _finding(
            PHYS_UNIT_MISSING,
            reading.record_id,
            f"{reading.at}.unit_latex",
            f"{reading.record_id} is {_a(reading.kind_text)} of {reading.value_text} with no unit; "
            f"{_a(kind_name)} needs a unit of {_labels(allowed)}.",
        )
    check = rules.value_checks.get(kind.value_check or "")
    if (
        reading.number is not None
        and check is not None
        and not unit.offset
        and not check.accepts(reading.number.value)
    ):
        yield _finding(
            PHYS_VALUE_RANGE,
            reading.record_id,
            f"{reading.at}.value_latex",
            f"{reading.record_id} is {_a(reading.kind_text)} of {reading.value_text}; {_a(kind_name)} is "
            f"{check.label}.",
        )


def _owner_finding(reading: _Reading, kind: KindRule, owner_id: str, owner_type: str) -> Finding | None:
    if kind.owner_types is None or owner_type == "unknown_physical" or owner_type in kind.owner_types:
        return None
    return _finding(
        PHYS_OWNER_TYPE,
        reading.record_id,
        f"{reading.at}.owner_id",
        f"{reading.record_id} is {_a(reading.kind_text)} owned by {owner_id}, {_a(owner_type.replace('_', ' '))}; "
        f"{_a(kind.name.replace('_', ' '))} belongs to {_or_list(sorted(kind.owner_types))}.",
    )


def _a(noun: str) -> str:
    noun = noun.replace("_", " ")
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _dimension_label(rules: RuleSet, unit: Unit) -> str:
    names = rules.dimension_names_of(unit)
    return rules.dimensions[names[0]].label if names else f"dimension {unit.dimensionality}"


def _labels(dimensions: list[Dimension]) -> str:
    return _or_list([dim.label for dim in dimensions])


def _or_list(items: list[str]) -> str:
    items = [item.replace("_", " ") for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _label_finding(
    rules: RuleSet, reading: _Reading, path: str, glyph_id: str, glyph_text: str
) -> Finding | None:
    label = unit_parsing.parse_label(glyph_text)
    if label is None or (label.unit is None and not label.named):
        # A symbol ("m", "T1") prints no value; a bare number ("1", "600") is as often a name or an axis tick.
        return None
    if reading.value is None or reading.value.status == "invalid" or reading.unit is None:
        return None  # no value, or one already reported (PHYS_VALUE_PARSE / PHYS_UNIT_PARSE)
    record_id, number, unit = reading.record_id, reading.number, reading.unit
    if number is None:
        return _finding(
            PHYS_LABEL_AGREEMENT,
            record_id,
            path,
            f'{record_id} anchors the label {glyph_id} "{glyph_text}", which prints a value, but its own value is '
            f'"{reading.value_text}"; copy the printed value.',
        )
    # Agreement within half a step of the coarser of the two printed last digits: "2.0 kg" is 2.04 but not 2.1.
    if label.unit is not None and unit.plain:
        if label.unit.dimensionality != unit.dimensionality:
            return _finding(
                PHYS_LABEL_AGREEMENT,
                record_id,
                path,
                f'{record_id} anchors the label {glyph_id} "{glyph_text}", a value of {_dimension_label(rules, label.unit)}, '
                f'but its unit "{reading.unit_text or unit.text}" is a unit of {_dimension_label(rules, unit)}.',
            )
        printed, own = label.unit.to_si(label.number.value), unit.to_si(number.value)
        tolerance = max(label.number.resolution * _scale(label.unit), number.resolution * _scale(unit)) / 2
    else:  # a bare number ("30"), or a quantity with no unit (PHYS_UNIT_MISSING's business): the numbers
        printed, own = label.number.value, number.value
        tolerance = max(label.number.resolution, number.resolution) / 2
    tolerance += _RELATIVE_EPSILON * max(abs(printed), abs(own))
    if math.isfinite(printed) and math.isfinite(own) and abs(printed - own) <= tolerance:
        return None
    unit_shown = f" {reading.unit_text}" if reading.unit_text.strip() else ""
    return _finding(
        PHYS_LABEL_AGREEMENT,
        record_id,
        path,
        f'{record_id} anchors the label {glyph_id} "{glyph_text}" but its value is {reading.value_text}{unit_shown}.',
    )


def _scale(unit: Unit) -> float:
    """SI per unit step (for °C: 1 K)."""
    return unit.to_si(1.0) - unit.to_si(0.0) if unit.offset else unit.factor


# --------------------------------------------------------------------------------------------
# The question


@dataclass(frozen=True)
class Asked:
    """What a question asks for, as the rule table reads it."""

    dimensions: frozenset[str]  # dimension names
    phrases: tuple[str, ...]  # the words that say so
    unreadable: (
        bool  # some ask ("find …", "what is …") names nothing the table knows: the question is not judged
    )


# How many words after "find" / "what is" the asked term may start (a term far later is no longer the ask:
# "Find the values of I_1 and I_2 (a) immediately after switch S is closed, (b) a long time after …").
_ASK_WINDOW_WORDS = 8


def asked_dimensions(rules: RuleSet, question: str) -> Asked:
    """The dimension names the question asks for and the phrases that say so."""
    dims: set[str] = set()
    phrases: list[str] = []
    unreadable = False
    if not isinstance(question, str):
        return Asked(frozenset(), (), False)
    for sentence in re.split(r"(?<=[.?!;。？！；])\s*|\n+", question):
        if not sentence.strip():
            continue
        for language in rules.questions:
            direct = False
            for pattern, names in language.direct:
                for match in pattern.finditer(sentence):
                    dims.update(names)
                    phrases.append(match.group(0))
                    direct = True
            for term in _asked_terms(language, sentence):
                kind = rules.kinds.get(term[0]) if term is not None else None
                if term is None or kind is None:
                    unreadable = unreadable or not direct
                    continue
                dims.update(kind.dimensions)
                phrases.append(term[1])
    return Asked(frozenset(dims), tuple(phrases), unreadable)


def _asked_terms(language: QuestionLanguage, sentence: str) -> Iterator[tuple[str, str] | None]:
    """Per ask cue of the sentence, the (kind, phrase) it asks for, or ``None`` when it names no known term."""
    for cue in language.cues.finditer(sentence):
        if language.head_last:
            yield _asked_term_head_last(language, sentence, cue)
            continue
        after = sentence[cue.end() :]
        # The cue's clause ends at the next cue ("… and find …" opens its own).
        next_cue = language.cues.search(after)
        clause = after[: next_cue.start()] if next_cue else after
        first = language.terms.search(clause)
        words = clause.split()
        if first is None or len(clause[: first.start()].split()) > _ASK_WINDOW_WORDS or not words:
            yield None
            continue
        yield language.term_kinds[_term_key(first.group("term"))], first.group(0)
        # "find the speed and the acceleration", "the net force and the net torque": the terms joined on.
        tail = clause[first.end() :]
        for joined in re.finditer(r"\b(?:and|or|as well as)\s+(?:the\s+|its\s+|their\s+)?", tail):
            rest = tail[joined.end() :]
            # the term itself, or after one qualifier word ("and the net torque")
            term = language.terms.match(rest) or language.terms.match(re.sub(r"^\S+\s+", "", rest, count=1))
            if term:
                yield language.term_kinds[_term_key(term.group("term"))], term.group(0)


def _asked_term_head_last(
    language: QuestionLanguage, sentence: str, cue: re.Match[str]
) -> tuple[str, str] | None:
    """Chinese: 求通过电阻R1的电流 / 物块的加速度多大 — the last term of the clause the cue opens or closes."""
    after = re.split(r"[，,]", sentence[cue.end() :])[0]
    before = re.split(r"[，,]", sentence[: cue.start()])[-1]
    terms = list(language.terms.finditer(after)) or list(language.terms.finditer(before))
    if not terms:
        return None
    return language.term_kinds[_term_key(terms[-1].group("term"))], terms[-1].group(0)


def _term_key(text: str) -> str:
    return " ".join(text.lower().split())


def _query_findings(rules: RuleSet, target: dict[str, Any], question: str) -> Iterator[Finding]:
    kind_text = _text(target.get("target_kind"))
    if not kind_text:
        return
    kind = rules.kind(kind_text)
    if kind is None:
        return
    asked = asked_dimensions(rules, question)
    if not asked.dimensions or asked.unreadable or asked.dimensions & set(kind.dimensions):
        return
    asked_labels = _or_list(sorted(rules.dimensions[name].label for name in asked.dimensions))
    said = ", ".join(dict.fromkeys(f'"{phrase}"' for phrase in asked.phrases))
    yield _finding(
        PHYS_QUERY_KIND,
        "query_target",
        "query_target.target_kind",
        f'The question asks for {asked_labels} ({said}) but the query target\'s kind "{kind_text}" is '
        f"{_labels([rules.dimensions[name] for name in kind.dimensions])}.",
    )
