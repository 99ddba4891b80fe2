"""The datasheet's pure arithmetic (probes.datasheet.figures): exact rounding, the domain groups, the vocabulary's
counting rule, and the paper's own printed Tables 6 and 7 recomputed from the paper's counts."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from probes.datasheet.figures import (
    DatasheetInput,
    ParentRow,
    ProbeRow,
    build_datasheet,
    count_terms,
    domain_group,
    exact_number,
    load_vocabulary,
    median,
    percent,
    ratio,
)
from probes.datasheet.figures import (
    agreement_statistics as figures_agreement_statistics,
)

VOCABULARY = load_vocabulary()


def test_percentages_round_half_up_from_the_exact_fraction():
    assert percent(478, 986) == "48.48"
    assert percent(208, 478) == "43.51"
    assert percent(1, 8) == "12.50"
    assert percent(1, 800) == "0.13"  # 0.125 exactly: half up (a float's round() would give 0.12)
    assert percent(1, 3) == "33.33" and percent(2, 3) == "66.67"
    assert percent(0, 7) == "0.00" and percent(7, 7) == "100.00"
    assert percent(3, 0) is None and ratio(3, 0) is None
    assert ratio(3341, 986) == "3.39" and ratio(553, 385) == "1.44" and ratio(5, 2) == "2.50"
    assert ratio(1, 8) == "0.13"  # 0.125
    assert exact_number(Fraction(5, 2)) == "2.5" and exact_number(Fraction(3)) == "3"
    assert median([4, 1, 3]) == 3 and median([1, 1, 2, 3]) == Fraction(3, 2) and median([]) is None


@pytest.mark.parametrize(
    ("label", "group"),
    [
        ("mechanics", "mechanics"),
        ("Mechanics", "mechanics"),
        ("circuits", "electromagnetism"),
        ("Electricity and Magnetism", "electromagnetism"),
        ("optics", "optics"),
        ("Thermal physics / thermodynamics", "thermal"),
        ("waves_acoustics", "waves"),
        ("Waves & acoustics", "waves"),
        ("nuclear physics", "modern"),
        ("astrophysics", "astronomy"),
        ("mixed", "cross_domain"),  # the Kit's Pass 4 domain for more than one
        ("biophysics", "cross_domain"),  # a label the table does not know
        ("", "unclassified"),
        ("  ", "unclassified"),
    ],
)
def test_domain_labels_map_to_the_papers_groups(label, group):
    assert domain_group(label) == group


def test_terms_are_whole_words_longest_first_in_english_and_chinese():
    text = "A block slides; the blocks' kinetic energy and potential energy, then the energy. Blockade. 木块的加速度和速度"
    assert count_terms(text, VOCABULARY) == {
        "block": 3,  # block, blocks, 木块; never "blockade"
        "kinetic energy": 1,
        "potential energy": 1,
        "energy": 1,  # the two-word forms took their "energy"
        "acceleration": 1,  # 加速度, not also 速度
        "velocity": 1,
    }
    assert count_terms("the answer is 42", VOCABULARY) == {}


def test_a_form_in_two_terms_is_refused(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(
        json.dumps({"version": "v", "families": [{"family": "F", "terms": {"a": ["force"], "b": ["force"]}}]})
    )
    with pytest.raises(ValueError, match="belongs to two terms"):
        load_vocabulary(path)
    path.write_text(json.dumps({"version": "v", "families": [{"family": "F", "terms": {"a": ["x-ray"]}}]}))
    with pytest.raises(ValueError, match="not words of letters"):
        load_vocabulary(path)


def test_the_shipped_vocabulary_loads_with_every_family():
    assert VOCABULARY.version == "studio_datasheet_vocabulary_v1"
    assert len(VOCABULARY.families) == 12
    assert VOCABULARY.family_of["pulley"] == "Bodies and apparatus"


# The paper's counts (Tables 1, 6 and 7) as rows: the datasheet must print the paper's percentages -----------------
PAPER_DOMAINS = {  # label: (N_d, H_d), Table 6
    "mechanics": (478, 208),
    "electromagnetism": (267, 112),
    "optics": (50, 15),
    "thermodynamics": (48, 10),
    "waves_acoustics": (35, 9),
    "modern physics": (19, 4),
    "astronomy": (11, 1),
    "mixed": (60, 21),
    "": (18, 5),
}
PAPER_SOURCES = {  # Table 1(a): (parents, parents with +GT)
    "SeePhys": (268, 119),
    "LiveK12Bench": (250, 88),
    "PhysElite": (220, 79),
    "OlympiadBench": (209, 68),
    "Gaokao-M-Physics": (23, 17),
    "PhyX-OE": (16, 14),
}


def paper_rows() -> DatasheetInput:
    """986 parents: per domain and source as Tables 6 and 1(a); development 79 parents / 208 probes / 90 paired,
    test 907 / 3,133 / 463 (Table 1(b)); probes per parent 1–6 with median 3 (Table 7(b))."""
    paired_domains = [d for d, (_, h) in PAPER_DOMAINS.items() for _ in range(h)]
    unpaired_domains = [d for d, (n, h) in PAPER_DOMAINS.items() for _ in range(n - h)]
    paired_sources = [s for s, (_, h) in PAPER_SOURCES.items() for _ in range(h)]
    unpaired_sources = [s for s, (n, h) in PAPER_SOURCES.items() for _ in range(n - h)]
    # (split, probes, paired) per parent, paired parents first
    plans = (
        [("development", 2, 2)] * 30
        + [("development", 3, 3)] * 10
        + [("test", 1, 1)]  # the range's 1
        + [("test", 3, 1)] * 226
        + [("test", 3, 2)] * 118
    )
    plans += (
        [("development", 3, 0)] * 38
        + [("development", 4, 0)]
        + [("test", 5, 0)]  # 3 + 3 = 1 + 5 with the paired parent above
        + [("test", 3, 0)] * 149
        + [("test", 4, 0)] * 410
        + [("test", 6, 0), ("test", 2, 0)]  # the range's 6 (4 + 4 = 6 + 2)
    )
    domains, sources = paired_domains + unpaired_domains, paired_sources + unpaired_sources
    assert len(plans) == len(domains) == len(sources) == 986
    parents, probes = [], []
    for n, ((split, count, paired), domain, source) in enumerate(zip(plans, domains, sources, strict=True)):
        pid = f"paper_{n:04d}"
        parents.append(ParentRow(pid, source, domain))
        probes += [ProbeRow(pid, split, k < paired) for k in range(count)]
    return DatasheetInput("NREL-paper", "test", tuple(parents), tuple(probes), image_files=18_640)


def test_the_papers_tables_6_and_7_come_out_of_the_papers_counts():
    sheet = build_datasheet(paper_rows())
    assert [(r.label, r.count, r.share, r.paired, r.unpaired, r.rate) for r in sheet.domains] == [
        ("Mechanics", 478, "48.48", 208, 270, "43.51"),
        ("Electromagnetism", 267, "27.08", 112, 155, "41.95"),
        ("Optics", 50, "5.07", 15, 35, "30.00"),
        ("Thermal physics / thermodynamics", 48, "4.87", 10, 38, "20.83"),
        ("Waves and acoustics", 35, "3.55", 9, 26, "25.71"),
        ("Modern, atomic and nuclear physics", 19, "1.93", 4, 15, "21.05"),
        ("Astronomy and astrophysics", 11, "1.12", 1, 10, "9.09"),
        ("Cross-domain / uncertain", 60, "6.09", 21, 39, "35.00"),
        ("Unclassified", 18, "1.83", 5, 13, "27.78"),
        ("Full release", 986, "100.00", 385, 601, "39.05"),
    ]
    assert [(r.label, r.parents, r.probes, r.paired, r.density, r.coverage) for r in sheet.partition] == [
        ("Development", 79, 208, 90, "2.63", "43.27"),
        ("Test", 907, 3133, 463, "3.45", "14.78"),
        ("Full release", 986, 3341, 553, "3.39", "16.55"),
    ]
    assert [(s.source, s.parents, s.parents_paired) for s in sheet.sources] == [
        ("SeePhys", 268, 119),
        ("LiveK12Bench", 250, 88),
        ("PhysElite", 220, 79),
        ("OlympiadBench", 209, 68),
        ("Gaokao-M-Physics", 23, 17),
        ("PhyX-OE", 16, 14),
        ("Full release", 986, 385),
    ]
    assert [(s.statistic, s.value, s.unit) for s in sheet.summaries] == [
        ("Parents with paired +GT inputs", "39.05%", "385/986 parents"),
        ("Paired +GT variants per paired parent", "1.44", "553/385 (parents with paired variants only)"),
        ("Localized probes per parent: median; range", "3; 1–6", "Parent-level summary"),
        ("Localized probes without a paired +GT variant", "2,788", "3,341 − 553 probes"),
        ("Packaged image files", "18,640", "File-level count"),
    ]
    # Figure 3 joins the residual groups: 60 + 18 = 78 cross-disciplinary parents, as the paper's radar says
    parents = sheet.radar[0]
    assert parents.label == "Source problems" and parents.total == 986
    assert dict(zip(sheet.radar_labels, parents.counts, strict=True)) == {
        "Mechanics": 478,
        "Electromagnetism": 267,
        "Optics": 50,
        "Thermodynamics": 48,
        "Waves & Acoustics": 35,
        "Modern, Atomic & Nuclear Physics": 19,
        "Astronomy & Astrophysics": 11,
        "Cross-disciplinary": 78,
    }
    assert parents.percents[-1] == "7.91"  # 100 · 78/986
    assert [s.total for s in sheet.radar] == [986, 3341, 553]


def test_a_parent_missing_from_the_database_is_counted_and_said():
    rows = DatasheetInput(
        "NREL-x",
        "test",
        (ParentRow("a", "S", "optics", "A lens."),),
        (ProbeRow("a", "test", True), ProbeRow("b", "test", False)),
        image_files=None,
    )
    sheet = build_datasheet(rows)
    assert [(s.source, s.parents) for s in sheet.sources] == [
        ("(unknown source)", 1),
        ("S", 1),
        ("Full release", 2),
    ]
    assert [(d.group, d.count) for d in sheet.domains if d.count] == [
        ("optics", 1),
        ("unclassified", 1),
        ("full", 2),
    ]
    assert sheet.notes == (
        "1 parent(s) of the release are not in this database: their source and domain are unknown "
        "(Unclassified) and their text is not profiled.",
    )
    assert sheet.summaries[-1].value == "—"
    assert sheet.summaries[2].value == "1; 1–1"


def test_pooled_agreement_figures_become_rows():
    pooled = [
        {
            "parents": 2,
            "pass_no": 2,
            "threshold": 0.5,
            "entities": {"first": 4, "second": 3, "matched": 3, "mean_score": 0.9, "f1": 6 / 7},
            "binding": {"n": 3, "agree": 2, "rate": 2 / 3},
            "entity_type": {"n": 3, "agree": 3, "rate": 1.0, "kappa": {"kappa": None, "n": 3}},
        },
        {"parents": 1, "pass_no": 1, "threshold": 0.5, "regions": {"first": 1, "second": 0, "matched": 0}},
    ]
    assert figures_agreement_statistics(pooled) == (
        ("Pass 1: parents compared", "1", "double-annotated parents"),
        ("Pass 1: regions F1", "—", "0 matched of 1 (first) and 0 (second)"),
        ("Pass 1: mean IoU of matched regions", "—", "0 matches at IoU ≥ 0.5"),
        ("Pass 2: parents compared", "2", "double-annotated parents"),
        ("Pass 2: entities F1", "85.71%", "3 matched of 4 (first) and 3 (second)"),
        ("Pass 2: binding agreement", "66.67%", "3 matched bound regions"),
        ("Pass 2: Cohen's κ, entity type", "—", "3 matched pairs"),  # one category only: κ undefined
    )
