"""The release datasheet's arithmetic, free of Django: the paper's Tables 1, 6 and 7 and Figures 3 and 6 from plain
rows (``probes.datasheet.selectors`` reads them from a release, or from the files an export is about to write).

Counting units, as the paper defines them (Appendix A.6):

- a **parent** is a parent problem with at least one localized probe in the release (N; N_s per split, N_d per
  domain group); a **localized probe** is a released probe (G, pool B; G_s per split); a **paired +GT input** is
  a probe of pool P (|P|; P_s ⊆ G_s), a variant of its probe, not an extra unique probe;
- H (H_d) is the number of parents (of group d) with at least one paired probe;
- Share = 100·N_d/N, Rate = 100·H_d/N_d, Unpaired = N_d − H_d; density = |G_s|/N_s; paired-probe coverage =
  100·|P_s|/|G_s|. Every percentage and ratio is rounded half up to two decimals from the exact fraction
  (``Fraction``, never a float), "—" (None) when there is nothing to divide;
- domain groups are estimated from the parent's free-text domain by ``DOMAIN_ALIASES`` (an empty domain is
  *Unclassified*, a label the table does not know is *Cross-domain / uncertain*); Figure 3 joins the two residual
  groups as *Cross-disciplinary*, like the paper;
- the content profile (Figure 6) counts, for each term of ``vocabulary.json``, the parents whose public problem
  text (statement, question and options; never the answer or solution) mentions it and how often; English
  forms are whole words, Chinese forms character runs, longest form first (``count_terms``).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "studio_release_datasheet_v1"
FULL = "Full release"
SPLITS = ("development", "test")  # the Kit's release splits, always shown (a split without probes too)
SPLIT_LABELS = {"development": "Development", "test": "Test"}
VOCABULARY_PATH = Path(__file__).resolve().parent / "vocabulary.json"
PROMINENT_TERMS = 20

# Table 6's groups in the paper's order: (key, label, Figure 3's label)
DOMAIN_GROUPS: tuple[tuple[str, str, str], ...] = (
    ("mechanics", "Mechanics", "Mechanics"),
    ("electromagnetism", "Electromagnetism", "Electromagnetism"),
    ("optics", "Optics", "Optics"),
    ("thermal", "Thermal physics / thermodynamics", "Thermodynamics"),
    ("waves", "Waves and acoustics", "Waves & Acoustics"),
    ("modern", "Modern, atomic and nuclear physics", "Modern, Atomic & Nuclear Physics"),
    ("astronomy", "Astronomy and astrophysics", "Astronomy & Astrophysics"),
    ("cross_domain", "Cross-domain / uncertain", "Cross-disciplinary"),
    ("unclassified", "Unclassified", "Cross-disciplinary"),
)
RESIDUAL_GROUPS = ("cross_domain", "unclassified")
RADAR_LABELS = tuple(dict.fromkeys(radar for _, _, radar in DOMAIN_GROUPS))

# A parent's free-text domain (normalized: lower case, spaces, dashes and slashes as "_") → its Table 6 group.
DOMAIN_ALIASES: dict[str, str] = {
    **dict.fromkeys(
        (
            "mechanics",
            "mechanical",
            "classical_mechanics",
            "kinematics",
            "dynamics",
            "statics",
            "fluids",
            "fluid_mechanics",
            "gravitation",
            "rotational_mechanics",
        ),
        "mechanics",
    ),
    **dict.fromkeys(
        (
            "electromagnetism",
            "electricity",
            "magnetism",
            "electricity_and_magnetism",
            "electrostatics",
            "electrodynamics",
            "circuits",
            "electric_circuits",
            "electromagnetic_induction",
        ),
        "electromagnetism",
    ),
    **dict.fromkeys(("optics", "light", "geometric_optics", "geometrical_optics", "wave_optics"), "optics"),
    **dict.fromkeys(
        (
            "thermodynamics",
            "thermal",
            "thermal_physics",
            "thermal_physics_thermodynamics",
            "heat",
            "heat_and_thermodynamics",
            "statistical_physics",
        ),
        "thermal",
    ),
    **dict.fromkeys(
        (
            "waves",
            "acoustics",
            "sound",
            "waves_acoustics",
            "waves_and_acoustics",
            "oscillations",
            "oscillations_and_waves",
            "vibrations_and_waves",
        ),
        "waves",
    ),
    **dict.fromkeys(
        (
            "modern",
            "modern_physics",
            "atomic",
            "atomic_physics",
            "nuclear",
            "nuclear_physics",
            "atomic_and_nuclear_physics",
            "modern_atomic_and_nuclear_physics",
            "quantum",
            "quantum_physics",
            "quantum_mechanics",
            "relativity",
            "particle_physics",
        ),
        "modern",
    ),
    **dict.fromkeys(
        ("astronomy", "astrophysics", "astronomy_and_astrophysics", "cosmology", "astronomy_astrophysics"),
        "astronomy",
    ),
    **dict.fromkeys(
        (
            "mixed",
            "cross_domain",
            "cross_disciplinary",
            "interdisciplinary",
            "uncertain",
            "cross_domain_uncertain",
        ),
        "cross_domain",
    ),
    **dict.fromkeys(("", "unclassified", "unknown", "none", "n_a", "other"), "unclassified"),
}


def domain_group(domain: str) -> str:
    """The Table 6 group key of a free-text domain (``DOMAIN_ALIASES``; an unknown label is cross-domain)."""
    key = re.sub(r"[\s/\-]+", "_", (domain or "").strip().lower()).strip("_")
    key = re.sub(r"_+", "_", key.replace("&", "and"))
    return DOMAIN_ALIASES.get(key, "cross_domain")


# Exact rounding ----------------------------------------------------------------------------------------------------
def _half_up(value: Fraction, places: int = 2) -> str:
    scale = 10**places
    units = (value * scale + Fraction(1, 2)).__floor__()
    whole, part = divmod(units, scale)
    return f"{whole}.{part:0{places}d}"


def percent(part: int, whole: int) -> str | None:
    """``100·part/whole`` rounded half up to two decimals ("48.48"), None when ``whole`` is 0."""
    return _half_up(Fraction(100 * part, whole)) if whole else None


def ratio(part: int, whole: int) -> str | None:
    """``part/whole`` rounded half up to two decimals ("3.39"), None when ``whole`` is 0."""
    return _half_up(Fraction(part, whole)) if whole else None


def exact_number(value: Fraction) -> str:
    """An exact number as written: "3", "2.5" (a median of whole counts has at most one decimal)."""
    if value.denominator == 1:
        return str(value.numerator)
    return _half_up(value, 2).rstrip("0")


def median(values: Sequence[int]) -> Fraction | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return Fraction(ordered[middle])
    return Fraction(ordered[middle - 1] + ordered[middle], 2)


# Input rows --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParentRow:
    """One parent problem of the release: its source, its free-text domain and its public problem text."""

    problem_id: str
    source: str
    domain: str
    text: str = ""


@dataclass(frozen=True)
class ProbeRow:
    """One released (localized) probe: its parent, its split and whether it is in pool P (paired +GT)."""

    problem_id: str
    split: str
    paired: bool


@dataclass(frozen=True)
class AgreementInput:
    """Double annotation of the release's parents: how many have a second, independent annotation, how many of
    those have at least one pass of it submitted, and the agreement figures (statistic, value, counting unit)."""

    double_annotated: int
    submitted: int
    figures: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class DatasheetInput:
    release_id: str
    split: str  # the release's own split (a Kit release is one split; the rows say which probe is in which)
    parents: tuple[ParentRow, ...]
    probes: tuple[ProbeRow, ...]
    image_files: (
        int | None
    )  # files under public/images/ (originals and views, deduplicated by bytes); None: unknown
    agreement: AgreementInput | None = None


# Agreement figures (the pooled ``annotation.agreement.core.combine`` figures of one pass, as plain dicts) -------
MATCHING_LABELS = {
    "regions": "regions",
    "entities": "entities",
    "mentions": "text mentions",
    "quantities": "quantities",
}
AGREEMENT_LABELS = {
    "transcription": ("transcription agreement", "matched text regions"),
    "region_type": ("region type agreement", "matched regions"),
    "binding": ("binding agreement", "matched bound regions"),
    "quantity_value": ("quantity value agreement", "matched quantities"),
    "quantity_unit": ("quantity unit agreement", "matched quantities"),
    "quantity_owner": ("quantity owner agreement", "matched quantities"),
}
KAPPA_LABELS = {"entity_type": "entity type", "quantity_kind": "quantity kind"}


def _rate_text(value: Any) -> str:
    return f"{100 * value:.2f}%" if isinstance(value, int | float) else "—"


def agreement_statistics(pooled: Sequence[dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """Rows (statistic, value, counting unit) of each pass's pooled agreement figures, in pass order: the parents
    compared, F1 of each matching (regions also their mean IoU), each agreement rate and Cohen's κ with the
    count it rests on. Rates are shown as percentages with two decimals, IoU and κ with three; "—": undefined."""
    rows: list[tuple[str, str, str]] = []
    for figures in sorted(pooled, key=lambda f: int(f.get("pass_no") or 0)):
        prefix = f"Pass {figures.get('pass_no')}"
        rows.append(
            (f"{prefix}: parents compared", f"{figures.get('parents', 0):,}", "double-annotated parents")
        )
        for key, label in MATCHING_LABELS.items():
            m = figures.get(key)
            if not isinstance(m, dict):
                continue
            rows.append(
                (
                    f"{prefix}: {label} F1",
                    _rate_text(m.get("f1")),
                    f"{m.get('matched', 0):,} matched of {m.get('first', 0):,} (first) and "
                    f"{m.get('second', 0):,} (second)",
                )
            )
            if key == "regions":
                mean = m.get("mean_score")
                threshold = figures.get("threshold")
                rows.append(
                    (
                        f"{prefix}: mean IoU of matched regions",
                        f"{mean:.3f}" if isinstance(mean, int | float) else "—",
                        f"{m.get('matched', 0):,} matches at IoU ≥ {threshold}",
                    )
                )
        for key, (label, unit) in AGREEMENT_LABELS.items():
            a = figures.get(key)
            if isinstance(a, dict):
                rows.append((f"{prefix}: {label}", _rate_text(a.get("rate")), f"{a.get('n', 0):,} {unit}"))
        for key, label in KAPPA_LABELS.items():
            c = figures.get(key)
            kappa = c.get("kappa") if isinstance(c, dict) else None
            if isinstance(kappa, dict):
                value = kappa.get("kappa")
                rows.append(
                    (
                        f"{prefix}: Cohen's κ, {label}",
                        f"{value:.3f}" if isinstance(value, int | float) else "—",
                        f"{kappa.get('n', 0):,} matched pairs",
                    )
                )
    return tuple(rows)


# Output rows -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceRow:  # Table 1(a)
    source: str
    parents: int
    parents_paired: int


@dataclass(frozen=True)
class SplitRow:  # Table 1(b) and Table 7(a)
    split: str
    label: str
    parents: int
    probes: int
    paired: int
    density: str | None  # |G_s| / N_s
    coverage: str | None  # 100 |P_s| / |G_s|


@dataclass(frozen=True)
class DomainRow:  # Table 6
    group: str
    label: str
    count: int
    share: str | None
    paired: int
    unpaired: int
    rate: str | None
    residual: bool


@dataclass(frozen=True)
class Summary:  # Table 7(b)
    key: str
    statistic: str
    value: str
    unit: str


@dataclass(frozen=True)
class RadarSeries:  # Figure 3: one collection's distribution over the domain groups
    label: str
    total: int
    counts: tuple[int, ...]
    percents: tuple[str | None, ...]


@dataclass(frozen=True)
class TermCount:
    term: str
    family: str
    parents: int
    occurrences: int


@dataclass(frozen=True)
class FamilyCount:  # Figure 6, left
    family: str
    parents: int
    share: str | None
    occurrences: int
    terms: tuple[TermCount, ...]


@dataclass(frozen=True)
class Datasheet:
    release_id: str
    split: str
    parents: int
    probes: int
    paired_probes: int
    paired_parents: int
    sources: tuple[SourceRow, ...]  # the last row is the full release
    partition: tuple[SplitRow, ...]  # the last row is the full release
    domains: tuple[DomainRow, ...]  # the last row is the full release
    summaries: tuple[Summary, ...]
    radar_labels: tuple[str, ...]
    radar: tuple[RadarSeries, ...]
    families: tuple[FamilyCount, ...]
    terms: tuple[TermCount, ...]  # the prominent terms, most parents first
    agreement: AgreementInput | None = None
    vocabulary_version: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


# The vocabulary and its counting -----------------------------------------------------------------------------------
WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Vocabulary:
    version: str
    families: tuple[tuple[str, tuple[str, ...]], ...]  # (family, its terms in file order)
    words: dict[tuple[str, ...], str]  # an English form as its words → the term
    runs: dict[str, str]  # a Chinese form → the term
    family_of: dict[str, str]
    longest_words: int  # the most words of an English form
    runs_by_first: dict[
        str, tuple[str, ...]
    ]  # a first character → the Chinese forms it starts, longest first


def load_vocabulary(path: Path = VOCABULARY_PATH) -> Vocabulary:
    data = json.loads(path.read_text(encoding="utf-8"))
    families: list[tuple[str, tuple[str, ...]]] = []
    words: dict[tuple[str, ...], str] = {}
    runs: dict[str, str] = {}
    family_of: dict[str, str] = {}
    for family in data["families"]:
        name = family["family"]
        families.append((name, tuple(family["terms"])))
        for term, forms in family["terms"].items():
            if term in family_of:
                raise ValueError(f"vocabulary: the term {term!r} is in two families")
            family_of[term] = name
            for form in forms:
                if form.isascii():
                    key = tuple(form.lower().split())
                    if not key or not all(WORD.fullmatch(word) for word in key):
                        raise ValueError(f"vocabulary: the English form {form!r} is not words of letters")
                    if key in words:
                        raise ValueError(f"vocabulary: the form {form!r} belongs to two terms")
                    words[key] = term
                else:
                    if form in runs:
                        raise ValueError(f"vocabulary: the form {form!r} belongs to two terms")
                    runs[form] = term
    by_first: dict[str, list[str]] = defaultdict(list)
    for form in sorted(runs, key=lambda f: (-len(f), f)):
        by_first[form[0]].append(form)
    return Vocabulary(
        data["version"],
        tuple(families),
        words,
        runs,
        family_of,
        max((len(k) for k in words), default=0),
        {first: tuple(forms) for first, forms in by_first.items()},
    )


def count_terms(text: str, vocabulary: Vocabulary) -> Counter[str]:
    """How often each term occurs in ``text``: English forms as whole words over the lower-cased text (a form of
    several words as consecutive words), Chinese forms as character runs; at each position the longest form that
    matches is counted and its words (characters) are consumed, so no occurrence counts for two terms."""
    found: Counter[str] = Counter()
    tokens = WORD.findall(text.lower())
    longest = vocabulary.longest_words
    i = 0
    while i < len(tokens):
        for size in range(min(longest, len(tokens) - i), 0, -1):
            term = vocabulary.words.get(tuple(tokens[i : i + size]))
            if term is not None:
                found[term] += 1
                i += size
                break
        else:
            i += 1
    j = 0
    while j < len(text):
        for form in vocabulary.runs_by_first.get(text[j], ()):
            if text.startswith(form, j):
                found[vocabulary.runs[form]] += 1
                j += len(form)
                break
        else:
            j += 1
    return found


def content_profile(
    texts: Iterable[str], vocabulary: Vocabulary, parents: int
) -> tuple[tuple[FamilyCount, ...], tuple[TermCount, ...]]:
    """Figure 6: per family and term, the parents whose text mentions it and its occurrences; and the prominent
    terms (most parents, then most occurrences, then by name; the first ``PROMINENT_TERMS`` that occur)."""
    term_parents: Counter[str] = Counter()
    term_occurrences: Counter[str] = Counter()
    family_parents: Counter[str] = Counter()
    for text in texts:
        counts = count_terms(text, vocabulary)
        term_parents.update(counts.keys())
        term_occurrences.update(counts)
        family_parents.update({vocabulary.family_of[term] for term in counts})
    families = []
    for name, terms in vocabulary.families:
        rows = tuple(
            TermCount(term, name, term_parents[term], term_occurrences[term])
            for term in sorted(terms, key=lambda t: (-term_parents[t], -term_occurrences[t], t))
        )
        families.append(
            FamilyCount(
                name,
                family_parents[name],
                percent(family_parents[name], parents),
                sum(term_occurrences[t] for t in terms),
                rows,
            )
        )
    every = [term for family in families for term in family.terms if term.parents]
    prominent = sorted(every, key=lambda t: (-t.parents, -t.occurrences, t.term))[:PROMINENT_TERMS]
    return tuple(families), tuple(prominent)


# The datasheet -----------------------------------------------------------------------------------------------------
def _split_order(splits: Iterable[str]) -> list[str]:
    return [*SPLITS, *sorted(set(splits) - set(SPLITS))]


def build_datasheet(rows: DatasheetInput, vocabulary: Vocabulary | None = None) -> Datasheet:
    """Every table and figure of the datasheet from the release's rows (exact counts; see the module docstring)."""
    vocabulary = vocabulary or load_vocabulary()
    known = {p.problem_id: p for p in rows.parents}
    parent_ids = sorted({p.problem_id for p in rows.probes})
    parents = {pid: known.get(pid, ParentRow(pid, "", "")) for pid in parent_ids}
    probes_of: Counter[str] = Counter(p.problem_id for p in rows.probes)
    paired_of: Counter[str] = Counter(p.problem_id for p in rows.probes if p.paired)
    n, g, p = len(parents), len(rows.probes), sum(paired_of.values())
    h = len(paired_of)

    by_source: dict[str, list[str]] = defaultdict(list)
    for pid, parent in parents.items():
        by_source[parent.source or "(unknown source)"].append(pid)
    sources = [
        SourceRow(name, len(ids), sum(1 for pid in ids if paired_of[pid]))
        for name, ids in sorted(by_source.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    sources.append(SourceRow(FULL, n, h))

    partition = []
    for split in _split_order(p.split for p in rows.probes):
        in_split = [probe for probe in rows.probes if probe.split == split]
        n_s = len({probe.problem_id for probe in in_split})
        g_s, p_s = len(in_split), sum(1 for probe in in_split if probe.paired)
        partition.append(
            SplitRow(split, SPLIT_LABELS.get(split, split), n_s, g_s, p_s, ratio(g_s, n_s), percent(p_s, g_s))
        )
    partition.append(SplitRow("full", FULL, n, g, p, ratio(g, n), percent(p, g)))

    group_of = {pid: domain_group(parent.domain) for pid, parent in parents.items()}
    domains = []
    for key, label, _ in DOMAIN_GROUPS:
        ids = [pid for pid in parent_ids if group_of[pid] == key]
        paired = sum(1 for pid in ids if paired_of[pid])
        domains.append(
            DomainRow(
                key,
                label,
                len(ids),
                percent(len(ids), n),
                paired,
                len(ids) - paired,
                percent(paired, len(ids)),
                key in RESIDUAL_GROUPS,
            )
        )
    domains.append(DomainRow("full", FULL, n, percent(n, n), h, n - h, percent(h, n), False))

    per_parent = [probes_of[pid] for pid in parent_ids]
    middle = median(per_parent)
    summaries = (
        Summary(
            "parents_with_paired",
            "Parents with paired +GT inputs",
            f"{percent(h, n)}%" if n else "—",
            f"{h:,}/{n:,} parents",
        ),
        Summary(
            "paired_per_paired_parent",
            "Paired +GT variants per paired parent",
            ratio(p, h) or "—",
            f"{p:,}/{h:,} (parents with paired variants only)",
        ),
        Summary(
            "probes_per_parent",
            "Localized probes per parent: median; range",
            f"{exact_number(middle)}; {min(per_parent)}–{max(per_parent)}" if middle is not None else "—",
            "Parent-level summary",
        ),
        Summary(
            "probes_without_paired",
            "Localized probes without a paired +GT variant",
            f"{g - p:,}",
            f"{g:,} − {p:,} probes",
        ),
        Summary(
            "image_files",
            "Packaged image files",
            f"{rows.image_files:,}" if rows.image_files is not None else "—",
            "File-level count"
            if rows.image_files is not None
            else "File-level count (the folder is not here)",
        ),
    )

    radar_of = {key: radar for key, _, radar in DOMAIN_GROUPS}
    parent_counts: Counter[str] = Counter(radar_of[group_of[pid]] for pid in parent_ids)
    probe_counts: Counter[str] = Counter(radar_of[group_of[probe.problem_id]] for probe in rows.probes)
    paired_counts: Counter[str] = Counter(
        radar_of[group_of[probe.problem_id]] for probe in rows.probes if probe.paired
    )
    radar = tuple(
        RadarSeries(
            label,
            total,
            tuple(counts[name] for name in RADAR_LABELS),
            tuple(percent(counts[name], total) for name in RADAR_LABELS),
        )
        for label, counts, total in (
            ("Source problems", parent_counts, n),
            ("Localized probes", probe_counts, g),
            ("Paired +GT inputs", paired_counts, p),
        )
    )

    families, terms = content_profile((parents[pid].text for pid in parent_ids), vocabulary, n)
    notes = []
    unknown = sorted(pid for pid in parent_ids if pid not in known)
    if unknown:
        notes.append(
            f"{len(unknown)} parent(s) of the release are not in this database: their source and domain are "
            "unknown (Unclassified) and their text is not profiled."
        )
    return Datasheet(
        release_id=rows.release_id,
        split=rows.split,
        parents=n,
        probes=g,
        paired_probes=p,
        paired_parents=h,
        sources=tuple(sources),
        partition=tuple(partition),
        domains=tuple(domains),
        summaries=summaries,
        radar_labels=RADAR_LABELS,
        radar=radar,
        families=families,
        terms=terms,
        agreement=rows.agreement,
        vocabulary_version=vocabulary.version,
        notes=tuple(notes),
    )


def datasheet_json(sheet: Datasheet) -> dict[str, Any]:
    """The datasheet as JSON-ready values (the release folder's ``datasheet.json``, ``--format json``)."""

    def rows(items: Iterable[Any]) -> list[dict[str, Any]]:
        return [dict(item.__dict__) for item in items]

    agreement = sheet.agreement
    return {
        "schema_version": SCHEMA_VERSION,
        "release_id": sheet.release_id,
        "split": sheet.split,
        "totals": {
            "parents": sheet.parents,
            "localized_probes": sheet.probes,
            "paired_probes": sheet.paired_probes,
            "parents_with_paired": sheet.paired_parents,
        },
        "table1_sources": rows(sheet.sources),
        "table1_partition": [
            {k: v for k, v in row.__dict__.items() if k not in ("density", "coverage")}
            for row in sheet.partition
        ],
        "table6_domains": rows(sheet.domains),
        "table7_density": [
            {"split": r.split, "label": r.label, "density": r.density, "coverage": r.coverage}
            for r in sheet.partition
        ],
        "table7_summaries": rows(sheet.summaries),
        "figure3_radar": {
            "labels": list(sheet.radar_labels),
            "series": [
                {"label": s.label, "total": s.total, "counts": list(s.counts), "percents": list(s.percents)}
                for s in sheet.radar
            ],
        },
        "figure6_content": {
            "vocabulary": sheet.vocabulary_version,
            "families": [
                {**{k: v for k, v in f.__dict__.items() if k != "terms"}, "terms": rows(f.terms)}
                for f in sheet.families
            ],
            "prominent_terms": rows(sheet.terms),
        },
        "agreement": None
        if agreement is None
        else {
            "double_annotated_parents": agreement.double_annotated,
            "second_annotation_submitted": agreement.submitted,
            "figures": [{"statistic": s, "value": v, "unit": u} for s, v, u in agreement.figures],
        },
        "notes": list(sheet.notes),
    }
