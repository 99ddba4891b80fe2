"""The datasheet of the small release of world.py, every number worked out by hand from its PARENTS:

    parent  source         domain            split        probes  paired
    ds_p1   SeePhys-mini   mechanics         development  3       2
    ds_p2   SeePhys-mini   Mechanics         test         1       0
    ds_p3   SeePhys-mini   circuits (EM)     test         4       1
    ds_p4   SeePhys-mini   optics            test         2       0
    ds_p5   OpenStax-mini  mechanics         development  2       1
    ds_p6   OpenStax-mini  electromagnetism  test         1       1

N = 6 parents, G = 13 probes, |P| = 5 paired probes, H = 4 parents with a paired probe (p1, p3, p5, p6).
"""

from __future__ import annotations

import pytest

from annotation.models import IndependentPassDocument, ParentProblem
from probes.datasheet.selectors import datasheet_for_release
from probes.datasheet.tables import datasheet_tables
from tests.factories import PassDocumentFactory
from tests.probes.datasheet.world import build_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def sheet(tmp_path, django_user_model):
    annotator = django_user_model.objects.create_user(username="second_annotator")
    return datasheet_for_release(build_release(tmp_path, annotator=annotator))


def test_totals(sheet):
    assert (sheet.parents, sheet.probes, sheet.paired_probes, sheet.paired_parents) == (6, 13, 5, 4)


def test_table_1a_source_coverage(sheet):
    # SeePhys-mini: p1–p4, with +GT p1, p3; OpenStax-mini: p5, p6, both with +GT
    assert [(r.source, r.parents, r.parents_paired) for r in sheet.sources] == [
        ("SeePhys-mini", 4, 2),
        ("OpenStax-mini", 2, 2),
        ("Full release", 6, 4),
    ]


def test_table_1b_partition_and_table_7a_density(sheet):
    # development: p1, p5 → 3 + 2 = 5 probes, 2 + 1 = 3 paired; density 5/2, coverage 3/5
    # test: p2, p3, p4, p6 → 1 + 4 + 2 + 1 = 8 probes, 0 + 1 + 0 + 1 = 2 paired; 8/4, 2/8
    # full: 13/6 = 2.1666… → 2.17; 5/13 = 38.4615… → 38.46
    assert [(r.label, r.parents, r.probes, r.paired, r.density, r.coverage) for r in sheet.partition] == [
        ("Development", 2, 5, 3, "2.50", "60.00"),
        ("Test", 4, 8, 2, "2.00", "25.00"),
        ("Full release", 6, 13, 5, "2.17", "38.46"),
    ]


def test_table_6_domain_composition(sheet):
    # mechanics p1, p2 ("Mechanics"), p5: 3/6, paired p1, p5: 2/3; EM p3 ("circuits"), p6: 2/6, both paired;
    # optics p4: 1/6, unpaired; the other groups are empty (a rate of nothing is "—")
    assert [(r.label, r.count, r.share, r.paired, r.unpaired, r.rate) for r in sheet.domains] == [
        ("Mechanics", 3, "50.00", 2, 1, "66.67"),
        ("Electromagnetism", 2, "33.33", 2, 0, "100.00"),
        ("Optics", 1, "16.67", 0, 1, "0.00"),
        ("Thermal physics / thermodynamics", 0, "0.00", 0, 0, None),
        ("Waves and acoustics", 0, "0.00", 0, 0, None),
        ("Modern, atomic and nuclear physics", 0, "0.00", 0, 0, None),
        ("Astronomy and astrophysics", 0, "0.00", 0, 0, None),
        ("Cross-domain / uncertain", 0, "0.00", 0, 0, None),
        ("Unclassified", 0, "0.00", 0, 0, None),
        ("Full release", 6, "100.00", 4, 2, "66.67"),
    ]


def test_table_7b_summaries(sheet):
    # probes per parent 3, 1, 4, 2, 2, 1 → sorted 1 1 2 2 3 4: median (2 + 2)/2 = 2, range 1–4
    assert [(s.statistic, s.value, s.unit) for s in sheet.summaries] == [
        ("Parents with paired +GT inputs", "66.67%", "4/6 parents"),
        ("Paired +GT variants per paired parent", "1.25", "5/4 (parents with paired variants only)"),
        ("Localized probes per parent: median; range", "2; 1–4", "Parent-level summary"),
        ("Localized probes without a paired +GT variant", "8", "13 − 5 probes"),
        ("Packaged image files", "9", "File-level count"),
    ]


def test_figure_3_radar(sheet):
    assert sheet.radar_labels[:3] == ("Mechanics", "Electromagnetism", "Optics")
    parents, probes, paired = sheet.radar
    # parents 3, 2, 1 of 6; probes 3+1+2 = 6, 4+1 = 5, 2 of 13; paired 2+0+1 = 3, 1+1 = 2, 0 of 5
    assert (parents.total, probes.total, paired.total) == (6, 13, 5)
    assert parents.counts == (3, 2, 1, 0, 0, 0, 0, 0)
    assert parents.percents[:3] == ("50.00", "33.33", "16.67")
    assert probes.counts == (6, 5, 2, 0, 0, 0, 0, 0)
    assert probes.percents[:3] == ("46.15", "38.46", "15.38")
    assert paired.counts == (3, 2, 0, 0, 0, 0, 0, 0)
    assert paired.percents == ("60.00", "40.00", "0.00", "0.00", "0.00", "0.00", "0.00", "0.00")


def test_figure_6_content_profile(sheet):
    families = {f.family: (f.parents, f.share, f.occurrences) for f in sheet.families}
    assert families == {
        "Forces and interactions": (2, "33.33", 3),  # p1 friction + force, p6 force
        "Motion and kinematics": (2, "33.33", 3),  # p5 speed + thrown (projectile), p6 speed
        "Energy, work and momentum": (1, "16.67", 1),  # p5 kinetic energy
        "Bodies and apparatus": (4, "66.67", 6),  # p1 block, p2 blocks rope pulley, p5 ball, p6 particle
        "Electricity and circuits": (2, "33.33", 6),  # p3 circuit resistor×2 battery current, p6 charged
        "Fields and magnetism": (1, "16.67", 1),  # p6 magnetic field
        "Light and optics": (1, "16.67", 2),  # p4 light, lens
        "Heat and thermodynamics": (0, "0.00", 0),
        "Waves and oscillations": (0, "0.00", 0),
        "Modern physics and astronomy": (0, "0.00", 0),
        "Geometry and spatial relations": (2, "33.33", 2),  # p1 incline, p5 horizontally
        "Quantities and properties": (1, "16.67", 1),  # p1 mass
    }
    # 21 terms occur; the prominent 20 are by parents, then occurrences, then name: "rope" (1, 1) is the 21st
    assert [(t.term, t.parents, t.occurrences) for t in sheet.terms] == [
        ("block", 2, 2),
        ("force", 2, 2),
        ("speed", 2, 2),
        ("resistor", 1, 2),
        *(
            (term, 1, 1)
            for term in (
                "ball",
                "battery",
                "charge",
                "circuit",
                "current",
                "friction",
                "horizontal",
                "incline",
                "kinetic energy",
                "lens",
                "light",
                "magnetic field",
                "mass",
                "particle",
                "projectile",
                "pulley",
            )
        ),
    ]


def test_agreement_counts_double_annotated_parents(sheet):
    assert sheet.agreement is not None
    assert (sheet.agreement.double_annotated, sheet.agreement.submitted) == (2, 1)


def _box(vid: str, bbox: list[int], text: str = "") -> dict:
    return {
        "id": vid,
        "type": "text_glyph" if text else "object_shape",
        "subtype": "",
        "text": text,
        "image_id": "img_0",
        "bbox_1000": bbox,
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }


def test_agreement_figures_of_the_double_annotated_parents(tmp_path, django_user_model):
    """ds_p1 annotated twice in Pass 1: the label box identical but read "n" instead of "m", the block's box
    shifted by 20 of its 100 units (IoU 8000/12000 = 2/3). Both regions match at IoU ≥ 0.5: F1 1, mean IoU
    (1 + 2/3)/2 = 0.833, transcription 0 of 1, region types 2 of 2. ds_p3's second annotation has no document:
    it is counted, not compared."""
    first_annotator = django_user_model.objects.create_user(username="first_annotator")
    release = build_release(tmp_path, annotator=django_user_model.objects.create_user(username="second"))
    p1 = ParentProblem.objects.get(problem_id="ds_p1")
    first = {
        "problem_id": "ds_p1",
        "ambiguities": [],
        "visual_nodes": [_box("v001", [100, 100, 200, 200], "m"), _box("v002", [300, 300, 400, 400])],
    }
    second = {
        **first,
        "visual_nodes": [_box("v001", [100, 100, 200, 200], "n"), _box("v002", [320, 300, 420, 400])],
    }
    PassDocumentFactory(parent=p1, pass_no=1, document=first, updated_by=first_annotator)
    IndependentPassDocument.objects.filter(second__parent=p1, pass_no=1).update(document=second)
    sheet = datasheet_for_release(release)
    assert sheet.agreement is not None
    assert sheet.agreement.figures == (
        ("Pass 1: parents compared", "1", "double-annotated parents"),
        ("Pass 1: regions F1", "100.00%", "2 matched of 2 (first) and 2 (second)"),
        ("Pass 1: mean IoU of matched regions", "0.833", "2 matches at IoU ≥ 0.5"),
        ("Pass 1: transcription agreement", "0.00%", "1 matched text regions"),
        ("Pass 1: region type agreement", "100.00%", "2 matched regions"),
    )
    assert [row for row in datasheet_tables(sheet) if row.slug == "agreement"][0].rows[
        2:
    ] == sheet.agreement.figures


def test_no_agreement_without_double_annotation(tmp_path):
    assert datasheet_for_release(build_release(tmp_path)).agreement is None


def test_without_its_folder_the_image_count_is_unknown(tmp_path):
    sheet = datasheet_for_release(build_release(tmp_path, folder=False))
    assert (sheet.summaries[-1].value, sheet.summaries[-1].unit) == (
        "—",
        "File-level count (the folder is not here)",
    )
    assert sheet.parents == 6  # everything else still comes from the items


@pytest.mark.parametrize("copies", [1, 5])
def test_queries_do_not_grow_with_the_items(tmp_path, django_user_model, django_assert_num_queries, copies):
    annotator = django_user_model.objects.create_user(username="second_annotator")
    release = build_release(tmp_path, copies=copies, annotator=annotator)
    # items, parents, second annotations, submitted ones, then annotation.agreement's three
    with django_assert_num_queries(7):
        sheet = datasheet_for_release(release)
    assert (sheet.parents, sheet.probes) == (6 * copies, 13 * copies)
