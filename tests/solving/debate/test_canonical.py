"""The value-aware Canonicalizer on real and synthetic physics answers (no database)."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solving.debate.canonical import canonical_equal, canonicalize, render, same_value, vote

EQUAL = [
    # units, prefixes, SI conversion
    ("5 kN", "5000 N"),
    ("21.5 N", "21.5\\,\\text{N}"),
    ("0.12 m", "12 cm"),
    ("8.0 J", "8 J"),
    ("8.0 J", "8.0 N m"),
    ("0.012 Nm", "0.012 N\\cdot m"),
    ("$0.29\\,\\mu \\text{F}$", "2.9e-7 F"),
    ("$0.29\\,\\mu \\text{F}$", "290 nF"),
    ("$5.7\\,\\text{Ω}$", "5.7 ohm"),
    ("$5.7\\,\\text{Ω}$", "5.7\\,\\Omega"),
    ("0.018 A", "18 mA"),
    ("$1.13\\,\\times \\,{10}^{-2}\\,\\text{m}$", "1.13 cm"),
    ("1 kWh", "3.6e6 J"),
    ("101325 Pa", "1 atm"),
    ("4.43 m/s^2", "$4.43\\,{\\text{m/s}}^2$"),
    ("4.43 m/s^2", "4.43\\,\\frac{\\text{m}}{\\text{s}^2}"),
    ("$v_2=3.28\\frac{\\text{m}}{\\text{s}}$", "3.28 m/s"),
    ("142.89 Hz", "142.89 s^-1"),
    ("36 km/h", "10 m/s"),
    # offset units
    ("25 °C", "298.15 K"),
    ("25^\\circ C", "298.15 K"),
    ("0 °C", "273.15 K"),
    # angles
    ("$48.2\\text{°}$", "48.2 deg"),
    ("$29\\text{°}$", "0.506 rad"),
    ("90°", "1.5708 rad"),
    # notation
    ("1.2e3", "1200"),
    ("1.2e3", "1.2\\times10^{3}"),
    ("1.2 × 10^3", "1200"),
    ("1.2 x 10^3 N", "1.2 kN"),
    ("3.0 \\cdot 10^{8} m/s", "3e8 m/s"),
    ("10^{-3} m", "1 mm"),
    ("4,43 m", "4.43 m"),
    ("1,200 N", "1200 N"),
    ("12{,}000 J", "12 kJ"),
    ("−0.05 N", "-0.05 N"),
    ("$F=-0.05\\,\\text{N}$", "-0.05 N"),
    ("x = vt = 1.57 m", "1.57 m"),
    # rounding within 1 %
    ("21.5 N", "21.46 N"),
    ("444.3 N", "444 N"),
    ("9.81 m/s^2", "9.8 m/s^2"),
    # fractions, roots, pi
    ("\\frac{1}{2}", "0.5"),
    ("\\dfrac{3}{4}", "0.75"),
    ("3/4", "0.75"),
    ("\\sqrt{2}", "1.414"),
    ("2\\pi", "6.283"),
    ("\\frac{\\sqrt{3}}{2}", "0.866"),
    # symbolic
    ("mg\\sin\\theta", "m g \\sin(\\theta)"),
    ("\\frac{4mRv_0}{B^2d^2}", "4mRv_{0}/B^{2}d^{2}"),
    ("\\sqrt{2gh}", "\\sqrt{2 g h}"),
    ("\\frac{mv^2}{r}", "m v^{2}/r"),
    ("\\frac{\\mu_0 I}{2\\pi r}", "\\mu_0 I/(2\\pi r)"),
    ("mg sin(theta)", "m g \\sin\\theta"),
    ("\\sin^2\\theta + \\cos^2\\theta", "1"),
    # choices
    ("(B)", "B"),
    ("B.", "b"),
    ("Option B", "B"),
    ("\\text{B}", "(B)"),
    ("A, C", "AC"),
    ("(A) and (C)", "C, A"),
    # multi-part
    ("a. 4.43 m/s^2; b. 21.5 N", "(a) 4.43 m/s^2 (b) 21.5 N"),
    ("a. 8.66 N; b. 0.433 m", "(a) 8.66 N\n(b) 43.3 cm"),
    (
        "a. $4.43\\,{\\text{m/s}}^2$ (mass 1 accelerates up the ramp as mass 2 falls with the same acceleration); b. 21.5 N",
        "(a) 4.43 m/s^2 (b) 21.5 N",
    ),
    ("a. 179 N; b. 290 N; c. 8.3 m/s", "(c) 8.3 m/s (a) 179 N (b) 290 N"),
    (
        "$v_A=24\\,\\text{m/s;}\\,v_B=14\\,\\text{m/s;}\\,v_C=31\\,\\text{m/s}$",
        "v_A = 24 m/s; v_B = 14 m/s; v_C = 31 m/s",
    ),
    ("0 N and 0.012 Nm", "0 N; 12 mJ"),
    ("a. 600 J; b. 0; c. 500 J", "a. 0.6 kJ; b. 0; c. 0.5 kJ"),
    # vectors
    ("$1.6\\hat{i}-0.8\\hat{j}\\,{\\text{m/s}}^2$", "(1.6\\hat{i} - 0.8\\hat{j}) m/s^2"),
    ("$1.6\\hat{i}-0.8\\hat{j}\\,{\\text{m/s}}^2$", "(160\\hat{i} - 80\\hat{j}) cm/s^2"),
    ("(3.8\\hat{i}+3.2\\hat{j}) km", "3800 \\hat{x} + 3200 \\hat{y} m"),
    # identical text
    ("CW as seen in the diagram", "cw  as seen in the diagram"),
    ("$\\boxed{21.5\\text{ N}}$", "21.5 N"),
]

UNEQUAL = [
    ("5 kN", "5 N"),
    ("5 N", "5 J"),
    ("5 N", "5"),
    ("5 m", "5 s"),
    ("25 °C", "25 K"),
    ("25 °C", "298.15 °C"),
    ("$29\\text{°}$", "29"),
    ("21.5 N", "22 N"),
    ("9.81 m/s^2", "9.5 m/s^2"),
    ("-0.05 N", "0.05 N"),
    ("0", "0.001"),
    ("1.2e3", "1.2e4"),
    ("\\frac{1}{2}", "0.6"),
    ("4.43 m/s^2", "$4.43\\,{\\text{m/s}}$"),
    ("mg\\sin\\theta", "mg\\cos\\theta"),
    ("\\frac{4mRv_0}{B^2d^2}", "\\frac{4mRv_0}{B d^2}"),
    ("\\sqrt{2gh}", "2gh"),
    ("(B)", "(C)"),
    ("A, C", "A"),
    ("B", "5 B"),
    ("C", "1 C"),
    ("a. 4.43 m/s^2; b. 21.5 N", "a. 4.43 m/s^2; b. 25 N"),
    ("a. 4.43 m/s^2; b. 21.5 N", "a. 4.43 m/s^2"),
    ("a. 8.66 N; b. 0.433 m", "a. 0.433 m; b. 8.66 N"),
    ("$1.6\\hat{i}-0.8\\hat{j}\\,{\\text{m/s}}^2$", "(1.6\\hat{i} + 0.8\\hat{j}) m/s^2"),
    ("$1.6\\hat{i}-0.8\\hat{j}\\,{\\text{m/s}}^2$", "1.79 m/s^2"),
    ("3.8 km east, 3.2 km north, 2.0 km", "3.8 km west, 3.2 km north, 2.0 km"),
    ("0.018 A, CW as seen in the diagram", "0.018 A"),
    ("yes", "no"),
    ("", ""),
    ("", "5 N"),
    ("not a number", "5 N"),
    ("10^{10^{10}}", "1"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_equal_pairs(a, b):
    assert same_value(a, b) is True
    assert same_value(b, a) is True


@pytest.mark.parametrize(("a", "b"), UNEQUAL)
def test_unequal_pairs(a, b):
    assert same_value(a, b) is False
    assert same_value(b, a) is False


def test_the_table_is_large_enough():
    assert len(EQUAL) + len(UNEQUAL) >= 60


def test_relative_tolerance_is_configurable():
    assert same_value("100 N", "101.5 N") is False
    assert same_value("100 N", "101.5 N", rel_tol=0.02) is True
    assert same_value("100 N", "100.05 N", rel_tol=1e-3) is True
    assert same_value("100 N", "100.5 N", rel_tol=1e-3) is False


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("", "empty"),
        ("   $ $ ", "empty"),
        ("(B)", "choice"),
        ("21.5 N", "quantity"),
        ("0.5", "quantity"),
        ("mg\\sin\\theta", "expression"),
        ("a. 8.66 N; b. 0.433 m", "multi"),
        ("(a) 8.66 N", "quantity"),
        ("right cable, 444.3 N; left cable, 888.5 N; weight of equipment 156.8 N; 16.0 kg", "multi"),
        ("clockwise", "text"),
        ("yes", "text"),
        ("x" * 5000, "text"),
    ],
)
def test_kinds(answer, kind):
    assert canonicalize(answer).kind == kind


def test_choice_letters_are_sorted_and_upper_case():
    assert canonicalize("c, a").letters == ()  # lower-case lists are not read as options
    assert canonicalize("(C) and (A)").letters == ("A", "C")
    assert canonicalize("Option b").letters == ("B",)
    assert canonicalize("(B) 4.4 N").letters == ("B",)


def test_quantity_is_held_in_si_units():
    quantity = canonicalize("0.29 µF").quantity
    assert quantity.dimensions == (("[current]", 2.0), ("[length]", -2.0), ("[mass]", -1.0), ("[time]", 4.0))
    assert quantity.components[0][1] == pytest.approx(2.9e-7)
    assert canonicalize("25 °C").quantity.components == (("", pytest.approx(298.15)),)


def test_multi_part_labels():
    parts = canonicalize("$v_A=24\\,\\text{m/s;}\\,v_B=14\\,\\text{m/s}$").parts
    assert [part.label for part in parts] == ["v_A", "v_B"]
    parts = canonicalize("a. 600 J; b. 0").parts
    assert [part.label for part in parts] == ["a", "b"]


@pytest.mark.parametrize(
    ("answer", "rendered"),
    [
        ("(b)", "B"),
        ("Option B", "B"),
        ("C, A", "AC"),
        ("5 kN", "5000\\,\\mathrm{N}"),
        ("4.43 m/s^2", "4.43\\,\\mathrm{m/s^{2}}"),
        ("$0.29\\,\\mu \\text{F}$", "2.9\\times10^{-7}\\,\\mathrm{F}"),
        ("25 °C", "298.15\\,\\mathrm{K}"),
        ("$48.2\\text{°}$", "48.2^\\circ"),
        ("12 cm", "0.12\\,\\mathrm{m}"),
        ("1.2e3", "1200"),
        ("3.6e6 J", "3.6\\times10^{6}\\,\\mathrm{J}"),
        ("2 kg m^2", "2\\,\\mathrm{kg\\,m^{2}}"),
        ("5.7 ohm", "5.7\\,\\mathrm{\\Omega}"),
        ("$1.6\\hat{i}-0.8\\hat{j}\\,{\\text{m/s}}^2$", "(1.6\\hat{i}-0.8\\hat{j})\\,\\mathrm{m/s^{2}}"),
        ("mg\\sin\\theta", "m g \\sin{\\left(\\theta \\right)}"),
        ("a. 4.43 m/s^2; b. 21.5 N", "(a) 4.43\\,\\mathrm{m/s^{2}}; (b) 21.5\\,\\mathrm{N}"),
        ("v_A = 24 m/s; v_B = 14 m/s", "v_A = 24\\,\\mathrm{m/s}; v_B = 14\\,\\mathrm{m/s}"),
        ("  clockwise. ", "clockwise"),
    ],
)
def test_grading_standard_rendering(answer, rendered):
    assert render(canonicalize(answer)) == rendered


def test_rendering_round_trips_to_the_same_value():
    for answer in ["5 kN", "$0.29\\,\\mu \\text{F}$", "a. 4.43 m/s^2; b. 21.5 N", "(B)", "25 °C", "48.2°"]:
        assert same_value(render(canonicalize(answer)), answer), answer


def test_vote_strict_majority_by_value():
    result = vote(["21.5 N", "21.46 N", "25 N"])
    assert result.clusters == ((0, 1), (2,))
    assert result.majority == 0
    assert result.winner == 0
    assert result.rendered == "21.5\\,\\mathrm{N}"
    assert result.cluster_of == (0, 0, 1)


def test_vote_false_tie_is_resolved_by_value_but_not_by_string():
    answers = ["\\frac{4mRv_0}{B^2d^2}", "4mRv_{0}/B^{2}d^{2}", "2mRv_0/(B^2 d^2)"]
    assert vote(answers).majority == 0
    assert vote(answers, by_value=False).majority is None


def test_vote_three_way_tie_has_no_majority_and_a_priority_tie_break():
    result = vote(["1 N", "2 N", "3 N"])
    assert result.majority is None and result.winner is None and result.rendered is None
    assert result.leader == 0
    assert vote(["1 N", "2 N", "3 N"], priority=[1, 0, 2]).leader == 0
    assert vote(["1 N", "2 N", "3 N"], priority=[1, 0, 2]).clusters == ((1,), (0,), (2,))


def test_vote_empty_answers_count_but_never_win():
    assert vote(["5 N", "", "5000 mN"]).majority == 0
    assert vote(["5 N", ""]).majority is None
    assert vote(["", "", ""]).leader is None
    assert vote(["", "", ""]).clusters == ()


def test_vote_representative_follows_priority():
    result = vote(["21.46 N", "21.5 N", "9 N"], priority=[1, 0, 2])
    assert result.winner == 1


def test_vote_rejects_a_bad_priority():
    with pytest.raises(ValueError):
        vote(["1", "2"], priority=[0, 0])


def test_unparseable_is_equal_only_to_itself():
    assert same_value("see figure", "see figure") is True
    assert same_value("see figure", "see the figure") is False


def test_canonicalize_accepts_non_strings_without_crashing():
    assert canonicalize(42).kind == "quantity"  # type: ignore[arg-type]


def test_canonical_equal_on_parsed_values():
    assert canonical_equal(canonicalize("5 kN"), canonicalize("5000 N"))


ANSWERISH = st.one_of(
    st.text(max_size=60),
    st.text(alphabet="0123456789.,eE^{}()\\ -+*/xmsNkgJ°CKAB$", max_size=40),
    st.sampled_from([a for a, _ in EQUAL] + [b for _, b in UNEQUAL]),
)


@settings(max_examples=300, deadline=None)
@given(ANSWERISH, ANSWERISH)
def test_same_value_is_symmetric_and_never_crashes(a, b):
    assert same_value(a, b) == same_value(b, a)


@settings(max_examples=200, deadline=None)
@given(ANSWERISH)
def test_canonicalize_is_reflexive_bounded_and_renders(answer):
    started = time.perf_counter()
    canonical = canonicalize(answer)
    assert isinstance(render(canonical), str)
    assert same_value(answer, answer) == (canonical.kind != "empty")
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    "hostile",
    [
        "10^{10^{10^{10}}}",
        "9^{99999}",
        "x^{100000}",
        "100000!",
        "\\frac{" * 200,
        "(" * 500 + "1",
        "1e999999 N",
    ],
)
def test_hostile_inputs_finish_quickly(hostile):
    started = time.perf_counter()
    same_value(hostile, "1")
    assert time.perf_counter() - started < 2.0


@given(st.floats(min_value=1e-6, max_value=1e6), st.sampled_from(["N", "m", "J", "kg", "m/s"]))
@settings(max_examples=100, deadline=None)
def test_a_number_equals_itself_in_scientific_and_prefixed_form(value, unit):
    assert same_value(f"{value!r} {unit}", f"{value:.6e} {unit}")
    assert same_value(
        f"{value!r} k{unit}" if unit != "kg" else f"{value!r} Mg",
        f"{value * 1000!r} {unit}" if unit != "kg" else f"{value * 1000!r} kg",
    )
