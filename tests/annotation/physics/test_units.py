"""Value and unit parsing (annotation.physics.units): every form the issue names, through pint."""

from __future__ import annotations

import math

import pytest

from annotation.physics.units import parse_label, parse_unit, parse_value, registry


def _si(value_text: str, unit_text: str = "") -> float:
    value = parse_value(value_text)
    assert value.status == "number", value
    unit = parse_unit(unit_text) if unit_text else value.unit or parse_unit("")
    assert unit is not None
    return unit.to_si(value.number.value)


@pytest.mark.parametrize(
    ("value_text", "unit_text", "si", "dimensionality"),
    [
        ("3.0×10^8 m/s", "", 3.0e8, "[length] / [time]"),
        ("3.0\\times10^{8}", "m/s", 3.0e8, "[length] / [time]"),
        ("5\\,\\mathrm{kg}", "", 5.0, "[mass]"),
        ("2 kΩ", "", 2000.0, "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2"),
        ("2\\,\\mathrm{k\\Omega}", "", 2000.0, "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2"),
        ("−4.0 nC", "", -4.0e-9, "[current] * [time]"),
        ("40^\\circ", "", math.radians(40), "dimensionless"),
        ("40°", "", math.radians(40), "dimensionless"),
        ("2.0", "\\mu C", 2.0e-6, "[current] * [time]"),
        ("2.0", "μC", 2.0e-6, "[current] * [time]"),
        ("2.0", "µC", 2.0e-6, "[current] * [time]"),  # the micro sign, not the Greek mu
        ("9.8", "m/s^2", 9.8, "[length] / [time] ** 2"),
        ("9.8", "m/s²", 9.8, "[length] / [time] ** 2"),
        ("3.0", "\\mathrm{m\\,s^{-1}}", 3.0, "[length] / [time]"),
        ("\\frac{1}{2}", "", 0.5, "dimensionless"),
        ("1/2", "", 0.5, "dimensionless"),
        ("7.0\\,\\times \\,{10}^{-4}", "{\\text{m}}^2", 7.0e-4, "[length] ** 2"),
        ("10^{-3}", "\\text{kg}", 1.0e-3, "[mass]"),
        ("6.67e-11", "N·m²/kg²", 6.67e-11, "[length] ** 3 / [mass] / [time] ** 2"),
        ("2,5", "m", 2.5, "[length]"),  # a decimal comma
        ("1{,}500", "m", 1500.0, "[length]"),  # a thousands separator
        ("+2.0", "nC", 2.0e-9, "[current] * [time]"),
        ("50", "\\text{V}", 50.0, "[length] ** 2 * [mass] / [current] / [time] ** 3"),
        ("19.4", "\\text{Ω}", 19.4, "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2"),
        ("25", "mH", 0.025, "[length] ** 2 * [mass] / [current] ** 2 / [time] ** 2"),
        ("1.5", "G", 1.5e-4, "[mass] / [current] / [time] ** 2"),  # gauss as 10⁻⁴ T, not pint's CGS unit
        ("125", "\\text{lines/cm}", 12500.0, "1 / [length]"),
    ],
)
def test_value_and_unit_forms_parse(value_text, unit_text, si, dimensionality):
    value = parse_value(value_text)
    unit = parse_unit(unit_text) if unit_text else value.unit or parse_unit("")
    assert unit is not None
    assert unit.dimensionality == str(
        registry().Quantity(1, dimensionality_unit(dimensionality)).dimensionality
    )
    assert _si(value_text, unit_text) == pytest.approx(si, rel=1e-12)


def dimensionality_unit(dimensionality: str) -> str:
    """A unit of the dimensionality, so the expected values stay readable."""
    return {
        "[length] / [time]": "m/s",
        "[mass]": "kg",
        "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2": "ohm",
        "[current] * [time]": "C",
        "dimensionless": "",
        "[length] / [time] ** 2": "m/s^2",
        "[length] ** 2": "m^2",
        "[length] ** 3 / [mass] / [time] ** 2": "m^3/kg/s^2",
        "[length]": "m",
        "[length] ** 2 * [mass] / [current] / [time] ** 3": "V",
        "[length] ** 2 * [mass] / [current] ** 2 / [time] ** 2": "H",
        "[mass] / [current] / [time] ** 2": "T",
        "1 / [length]": "1/m",
    }[dimensionality] or "dimensionless"


@pytest.mark.parametrize(
    ("text", "resolution"),
    [
        ("2.0", 0.1),
        ("12", 1.0),
        ("0.30", 0.01),
        ("3.0\\times10^{8}", 1e7),
        ("10^{-3}", 1e-3),
        ("\\frac{1}{2}", 0.0),
    ],
)
def test_a_number_keeps_the_resolution_of_its_printed_digits(text, resolution):
    assert parse_value(text).number.resolution == pytest.approx(resolution)


@pytest.mark.parametrize(
    "text", ["v_0", "2\\pi", "120\\pi", "\\sqrt{2gh}", "10.0\\hat{i}", "mg\\sin\\theta", "x"]
)
def test_symbols_and_expressions_are_symbolic_not_errors(text):
    assert parse_value(text).status == "symbolic"


@pytest.mark.parametrize("text", ["", "  ", "?", "—", "\\ldots"])
def test_empty_and_unknown_markers_are_empty(text):
    assert parse_value(text).status == "empty"


@pytest.mark.parametrize("text", ["3.0.1", "4..5", "12)", "--", "+-3", "1/0"])
def test_digits_that_make_no_number_are_invalid(text):
    assert parse_value(text).status == ("empty" if text == "--" else "invalid")


@pytest.mark.parametrize("text", ["apples", "furlongs per apple", "2 m", "m/", "\\mathrm{kg", "\\alpha"])
def test_units_pint_cannot_read_are_none(text):
    assert parse_unit(text) is None


def test_an_empty_unit_is_dimensionless():
    unit = parse_unit("")
    assert (unit.plain, unit.dimensionality, unit.factor) == ("", "dimensionless", 1.0)


def test_celsius_converts_with_its_offset():
    unit = parse_unit("°C")
    assert unit.offset and unit.dimensionality == "[temperature]"
    assert unit.to_si(25.0) == pytest.approx(298.15)


@pytest.mark.parametrize(
    ("text", "value", "unit_plain", "named"),
    [
        ("5 m", 5.0, "m", False),
        ("30°", 30.0, "degree", False),
        ("2.0 kg", 2.0, "kg", False),
        ("+2.0 nC", 2.0, "nC", False),
        ("−3.0 μC", -3.0, "uC", False),
        ("θ = 30°", 30.0, "degree", True),
        ("R1 = 4 Ω", 4.0, "ohm", True),
        ("I = 10A", 10.0, "A", True),
        ("ρ = 1000 kg/m³", 1000.0, "kg/m^3", True),
        ("v = 0", 0.0, None, True),
        ("600", 600.0, None, False),
    ],
)
def test_labels_that_print_a_value(text, value, unit_plain, named):
    label = parse_label(text)
    assert label is not None
    assert label.number.value == value
    assert (label.unit.plain if label.unit else None) == unit_plain
    assert label.named is named


@pytest.mark.parametrize(
    "text",
    [
        "m",
        "F",
        "T1",
        "k",
        "mg",
        "d = ?",
        "(170 V) sin 120 πt",
        "3.0 m, 4.0 m",
        "Red (660 nm)",
        "Δy = xλ/d",
        "10.0î N",
    ],
)
def test_labels_that_print_no_single_value(text):
    assert parse_label(text) is None
