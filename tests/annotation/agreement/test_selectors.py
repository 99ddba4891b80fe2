"""The agreement reads: which parents count, who the pair is, pooled figures equal to the core's, flat queries."""

from __future__ import annotations

import pytest

from annotation.agreement.core import combine, pass_agreement
from annotation.agreement.selectors import agreement_parents, agreement_summary
from annotation.models import PassDocument
from tests.annotation.agreement.world import build

pytestmark = pytest.mark.django_db


def expected(world, problem_ids, pass_no):
    figures = []
    for pid in problem_ids:
        first, second = world.first_docs[pid], world.perturbations[pid].documents
        figures.append(
            pass_agreement(
                pass_no,
                first[pass_no],
                second[pass_no],
                first_earlier={n: first[n] for n in range(1, pass_no)},
                second_earlier={n: second[n] for n in range(1, pass_no)},
            )
        )
    return combine(figures)


def test_pairs_per_first_and_second_annotator_and_pass(django_user_model):
    world = build(django_user_model, parents=3, only_pass1=(2,))
    summary = agreement_summary()
    keys = [(p.first.name, p.second.name, p.pass_no, p.parents, p.submitted) for p in summary.pairs]
    # agr_0 and agr_2 go to bob, agr_1 to carol; agr_2 has only bob's Pass 1; Pass 3 is a draft everywhere
    assert keys == [
        ("alice", "bob", 1, 2, 2),
        ("alice", "bob", 2, 1, 1),
        ("alice", "bob", 3, 1, 0),
        ("alice", "carol", 1, 1, 1),
        ("alice", "carol", 2, 1, 1),
        ("alice", "carol", 3, 1, 0),
    ]
    bob1 = summary.pair(world.alice.pk, world.bob.pk, 1)
    assert bob1 is not None and bob1.figures == expected(world, ["agr_0", "agr_2"], 1)
    bob3 = summary.pair(world.alice.pk, world.bob.pk, 3)
    assert bob3.figures == expected(world, ["agr_0"], 3)
    # each perturbation is in the pooled figures: one dropped label per parent, one wrong unit
    n = sum(len(world.first_docs[pid][1]["visual_nodes"]) for pid in ("agr_0", "agr_2"))
    assert bob1.figures["regions"]["recall"] == pytest.approx((n - 2) / n)
    m = len(world.first_docs["agr_0"][3]["quantities"])
    assert bob3.figures["quantity_unit"] == {"n": m, "agree": m - 1, "rate": pytest.approx((m - 1) / m)}
    assert [p.problem_id for p in summary.parents_of(world.alice.pk, world.bob.pk, 1)] == ["agr_0", "agr_2"]
    assert (
        summary.parents_of(world.alice.pk, world.bob.pk, 1)[0].curation_url
        == "/problems/agr_0/passes/1/curate/"
    )


def test_the_first_annotator_is_the_last_saver_of_that_pass(django_user_model):
    world = build(django_user_model, parents=1)
    PassDocument.objects.filter(parent__problem_id="agr_0", pass_no=2).update(updated_by=world.carol)
    PassDocument.objects.filter(parent__problem_id="agr_0", pass_no=3).update(updated_by=None)
    pairs = {(p.first.name, p.pass_no) for p in agreement_summary().pairs}
    assert pairs == {("alice", 1), ("carol", 2), ("(unknown)", 3)}
    assert {p.first.id for p in agreement_summary().pairs if p.pass_no == 3} == {0}


def test_a_parent_without_the_first_annotations_pass_is_not_compared(django_user_model):
    build(django_user_model, parents=1)
    PassDocument.objects.filter(parent__problem_id="agr_0", pass_no=1).delete()
    assert [(r.problem_id, r.pass_no) for r in agreement_parents()] == [("agr_0", 2), ("agr_0", 3)]


def test_one_sample_or_every_sample_and_the_threshold(django_user_model):
    one = build(django_user_model, parents=1, prefix="one")
    build(django_user_model, parents=1, prefix="two")
    assert {r.problem_id for r in agreement_parents()} == {"one_0", "two_0"}
    assert {r.problem_id for r in agreement_parents(sample_id=one.sample.pk)} == {"one_0"}
    strict = agreement_parents(sample_id=one.sample.pk, threshold=1.0)
    assert (
        strict[0].figures["regions"]["matched"]
        < agreement_parents(sample_id=one.sample.pk)[0].figures["regions"]["matched"]
    )
    assert agreement_parents(sample_id=one.sample.pk + 99) == []


@pytest.mark.parametrize("parents", [1, 10])
def test_queries_are_flat_in_the_number_of_parents(django_user_model, django_assert_max_num_queries, parents):
    build(django_user_model, parents=parents)
    with django_assert_max_num_queries(3):
        summary = agreement_summary()
    assert sum(p.parents for p in summary.pairs if p.pass_no == 1) == parents
