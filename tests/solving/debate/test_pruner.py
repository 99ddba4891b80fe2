"""Memory masking from the pruning model's yes / no / not-sure labels."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solving.debate.pruner import Label, Memory, apply_mask, parse_label, parse_labels

MEMORIES = (Memory("gpt", "21.5 N", "r1"), Memory("gemini", "25 N", "r2"), Memory("claude", "21.5 N", "r3"))


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("yes", Label.YES),
        ("No", Label.NO),
        ("not sure", Label.NOT_SURE),
        ("Not Sure.", Label.NOT_SURE),
        ("**Yes**", Label.YES),
        ("<label>no</label>", Label.NO),
        ("Verdict: not sure", Label.NOT_SURE),
        ("The free-body diagram is right, but the tension is wrong.\nVerdict: no", Label.NO),
        ("Step 1 is incorrect... wait, I misread. Judgment: yes", Label.YES),
        ("The solution is fully correct.", Label.YES),
        ("The solution is not correct.", Label.NO),
        ("The answer is incorrect", Label.NO),
        ("I cannot determine this from the figure", Label.NOT_SURE),
        ("Label: yes\n(Earlier I said no.)", Label.YES),
        ("no idea what this means? Final answer: unsure", Label.NOT_SURE),
        ("", Label.NOT_SURE),
        ("banana", Label.NOT_SURE),
        ("nonsense notation", Label.NOT_SURE),
    ],
)
def test_parse_label(text, label):
    assert parse_label(text) is label


def test_parse_labels_numbered_and_in_order():
    assert parse_labels("Solution 1: yes\nSolution 3: no\n", 3) == (Label.YES, Label.NOT_SURE, Label.NO)
    assert parse_labels("yes, no", 3) == (Label.YES, Label.NO, Label.NOT_SURE)
    assert parse_labels("2) not sure\n1) no", 2) == (Label.NO, Label.NOT_SURE)


def test_strict_mode_masks_not_sure():
    result = apply_mask(MEMORIES, [Label.YES, Label.NOT_SURE, Label.NO], strict=True)
    assert result.kept == (MEMORIES[0],)
    assert result.masked == (MEMORIES[1], MEMORIES[2])
    assert result.all_masked is False


def test_lenient_mode_keeps_not_sure():
    result = apply_mask(MEMORIES, [Label.YES, Label.NOT_SURE, Label.NO], strict=False)
    assert result.kept == (MEMORIES[0], MEMORIES[1])
    assert result.masked == (MEMORIES[2],)


def test_all_masked():
    result = apply_mask(MEMORIES, [Label.NO, Label.NOT_SURE, Label.NO])
    assert result.kept == () and result.all_masked is True


def test_one_label_per_memory():
    with pytest.raises(ValueError):
        apply_mask(MEMORIES, [Label.YES])


@given(st.text(max_size=200))
def test_parse_label_never_crashes(text):
    assert parse_label(text) in set(Label)
