"""The simulated second annotator: each perturbation is caught by pass_agreement, by exactly its share."""

from __future__ import annotations

import copy

import pytest

from annotation.agreement.core import pass_agreement
from annotation.agreement.perturb import perturb, perturbation, wrong_unit_for
from annotation.demo.generator import FAMILIES, generate_problem
from kit.passes.validator import ImageRef, PassContext, validate_pass_document

SEED = 7


def demo(index: int) -> tuple[object, dict[int, dict]]:
    problem = generate_problem(seed=2027, index=index)
    return problem, dict(enumerate(problem.passes, start=1))


INDICES = range(len(FAMILIES))  # one problem of each family


def earlier(docs: dict[int, dict], pass_no: int) -> dict[int, dict]:
    return {n: docs[n] for n in range(1, pass_no)}


def agreement(pass_no: int, first: dict[int, dict], second: dict[int, dict]) -> dict:
    return pass_agreement(
        pass_no,
        first[pass_no],
        second[pass_no],
        first_earlier=earlier(first, pass_no),
        second_earlier=earlier(second, pass_no),
    )


@pytest.mark.parametrize("index", INDICES)
def test_the_shift_lowers_the_mean_iou_and_unmatches_nothing(index):
    _, docs = demo(index)
    shifted = perturb(docs, seed=SEED, drop_label=False, wrong_unit=False)
    regions = agreement(1, docs, shifted)["regions"]
    n = len(docs[1]["visual_nodes"])
    assert (regions["first"], regions["second"], regions["matched"]) == (n, n, n)
    assert regions["mean_score"] < 1.0
    assert regions["mean_score"] > 0.62  # each box moved by at most 1/8 of each side
    # the later passes still agree fully through the matching
    assert agreement(2, docs, shifted)["binding"]["rate"] == 1.0
    assert agreement(3, docs, shifted)["quantity_owner"]["rate"] == 1.0


@pytest.mark.parametrize("index", INDICES)
def test_the_dropped_label_lowers_recall_by_exactly_one_over_n(index):
    _, docs = demo(index)
    result = perturbation(docs, seed=SEED, shift=0, wrong_unit=False)
    assert result.dropped_id is not None
    dropped = next(v for v in docs[1]["visual_nodes"] if v["id"] == result.dropped_id)
    assert dropped["type"] == "text_glyph" and dropped["text"] == result.dropped_text
    n = len(docs[1]["visual_nodes"])
    regions = agreement(1, docs, result.documents)["regions"]
    assert regions["recall"] == pytest.approx(1 - 1 / n)
    assert (regions["precision"], regions["mean_score"], regions["unmatched_first"]) == (1.0, 1.0, 1)
    # renumbered without a gap, and nothing refers to a region that is gone
    assert [v["id"] for v in result.documents[1]["visual_nodes"]] == [f"v{i:03d}" for i in range(1, n)]
    assert result.renamed.get(result.dropped_id) is None


@pytest.mark.parametrize("index", INDICES)
def test_the_wrong_unit_lowers_unit_agreement_by_exactly_one_over_m(index):
    _, docs = demo(index)
    result = perturbation(docs, seed=SEED, shift=0, drop_label=False)
    assert result.unit_quantity_id is not None and result.unit_after != result.unit_before
    figures = agreement(3, docs, result.documents)
    m = figures["quantities"]["matched"]
    assert m == len(docs[3]["quantities"])
    assert figures["quantity_unit"] == {"n": m, "agree": m - 1, "rate": pytest.approx((m - 1) / m)}
    for key in ("quantity_kind", "quantity_value", "quantity_owner"):
        assert figures[key]["rate"] == 1.0
    # Pass 4 carries the same change
    assert pass_agreement(4, docs[4], result.documents[4])["quantity_unit"]["agree"] == m - 1


@pytest.mark.parametrize("index", INDICES)
def test_the_three_together_and_the_documents_stay_valid(index):
    problem, docs = demo(index)
    second = perturb(docs, seed=SEED)
    row = problem.manifest_row
    image = row["images"][0]
    for pass_no in (1, 2, 3, 4):
        context = PassContext(
            problem_id=problem.problem_id,
            stem=row["segments"]["stem"],
            query=row["segments"]["query"],
            images=(ImageRef(image["image_id"], image["width"], image["height"]),),
            **{f"pass{n}": second[n] for n in range(1, pass_no)},
        )
        assert validate_pass_document(pass_no, second[pass_no], context) == []
    n = len(docs[1]["visual_nodes"])
    regions = agreement(1, docs, second)["regions"]
    assert regions["recall"] == pytest.approx(1 - 1 / n) and regions["mean_score"] < 1.0
    m = len(docs[3]["quantities"])
    assert agreement(3, docs, second)["quantity_unit"]["agree"] == m - 1


def test_the_unperturbed_control_agrees_fully():
    _, docs = demo(0)
    control = perturb(docs, seed=SEED, shift=0, drop_label=False, wrong_unit=False)
    assert control == docs
    assert agreement(1, docs, control)["regions"]["mean_score"] == 1.0


def test_seeded_and_independent_streams():
    _, docs = demo(3)
    original = copy.deepcopy(docs)
    a = perturbation(docs, seed=SEED)
    assert a == perturbation(docs, seed=SEED)
    assert docs == original  # the input is not changed
    assert perturbation(docs, seed=SEED + 1).offsets != a.offsets
    # switching the drop off leaves the shift and the unit exactly as they were
    b = perturbation(docs, seed=SEED, drop_label=False)
    assert b.offsets == a.offsets and b.unit_quantity_id == a.unit_quantity_id and b.dropped_id is None


def test_offsets_respect_the_caps():
    _, docs = demo(5)
    result = perturbation(docs, seed=SEED, shift=30)
    for node in docs[1]["visual_nodes"]:
        dx, dy = result.offsets[node["id"]]
        x0, y0, x1, y1 = node["bbox_1000"]
        assert abs(dx) <= min(30, (x1 - x0) // 8) and abs(dy) <= min(30, (y1 - y0) // 8)
    assert perturbation(docs, seed=SEED, shift=0).offsets == {}


def test_nothing_to_drop_without_a_text_glyph():
    docs = {1: {"problem_id": "p", "visual_nodes": [], "ambiguities": []}}
    result = perturbation(docs, seed=SEED)
    assert (result.dropped_id, result.unit_quantity_id) == (None, None)


@pytest.mark.parametrize(
    ("unit", "wrong"),
    [("kg", "g"), ("\\mathrm{m}", "cm"), ("^\\circ", "rad"), ("\\Omega", "k\\Omega"), ("lx", "klx")],
)
def test_wrong_units(unit, wrong):
    assert wrong_unit_for(unit) == wrong
