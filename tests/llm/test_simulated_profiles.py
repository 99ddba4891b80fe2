"""Simulated models with skill profiles: the seeded profile generator, determinism, and that each profile
field does what it says on probe prompts (perception from the request only) and on solving prompts."""

from __future__ import annotations

import json

import pytest

from kit.model_output import scored_object
from llm import LLMRequest, ProviderConfig, generate
from llm.errors import ErrorKind
from llm.providers.simulated import SkillProfile, derive_answer
from models_registry.demo import DEMO_SOLVERS, demo_models, demo_skill_profiles

EXPECTED_PROFILES = {
    "sim-careful": {
        "reading": 0.93,
        "grounding": 0.91,
        "image_reliance": 0.05,
        "position_bias": 0.01,
        "format_failure": 0.01,
        "solving": 0.94,
    },
    "sim-packet-reliant": {
        "reading": 0.82,
        "grounding": 0.82,
        "image_reliance": 0.62,
        "position_bias": 0.04,
        "format_failure": 0.03,
        "solving": 0.61,
    },
    "sim-first-option": {
        "reading": 0.75,
        "grounding": 0.65,
        "image_reliance": 0.24,
        "position_bias": 0.53,
        "format_failure": 0.05,
        "solving": 0.58,
    },
    "sim-sloppy": {
        "reading": 0.46,
        "grounding": 0.43,
        "image_reliance": 0.35,
        "position_bias": 0.08,
        "format_failure": 0.24,
        "solving": 0.33,
    },
}


def test_profile_generator_is_seeded_and_exact():
    assert demo_skill_profiles() == EXPECTED_PROFILES
    assert demo_skill_profiles(2027) == demo_skill_profiles(2027)
    assert demo_skill_profiles(7) != demo_skill_profiles(2027)
    names = [m["name"] for m in demo_models()]
    assert names == ["simulated", "baseline-ocr-nearest", *EXPECTED_PROFILES]
    assert set(DEMO_SOLVERS) <= set(EXPECTED_PROFILES) and len(set(DEMO_SOLVERS)) == 3
    profiles = {m["name"]: m["extra"]["profile"] for m in demo_models() if "profile" in m.get("extra", {})}
    assert len({json.dumps(p, sort_keys=True) for p in profiles.values()}) == 4  # four different profiles
    careful, sloppy = profiles["sim-careful"], profiles["sim-sloppy"]
    assert careful["reading"] > sloppy["reading"] and careful["grounding"] > sloppy["grounding"]
    assert profiles["sim-packet-reliant"]["image_reliance"] > 0.5 > careful["image_reliance"]
    assert profiles["sim-first-option"]["position_bias"] > 0.4
    assert sloppy["format_failure"] > 0.2


def _config(seed: int = 1, **profile: float) -> ProviderConfig:
    return ProviderConfig(name="p", provider="simulated", model="p", extra={"seed": seed, "profile": profile})


def _probe_prompt(n: int, *, packet: str = "No reading information is supplied.") -> str:
    """A T03-style probe prompt without images: R1 overlaps E3's box most, so E3 is what the model perceives."""
    return (
        f"[Original statement]\nProblem {n}: a block on an incline.\n[Images and locator views]\nimg_0: original\n"
        "[Evidence locations]\n"
        'R1: img_0 {"bbox_1000": [300, 300, 360, 340], "type": "bbox"}\n'
        "[Candidates]\n"
        'E2: img_0 {"bbox_1000": [0, 0, 100, 100], "type": "bbox"}\n'
        'E3: img_0 {"bbox_1000": [310, 310, 500, 500], "type": "bbox"}\n'
        'E1: img_0 {"bbox_1000": [700, 700, 900, 900], "type": "bbox"}\n'
        "[Local question]\nCopy the visible text at R1 exactly as written.\n"
        "The quantity marked at R1 belongs directly to which candidate entity?\n"
        f"[Local reading information]\n{packet}\n"
        '[Output format]\n{"read": "<transcription>", "owner": "<candidate ID>"}'
    )


def _answers(config: ProviderConfig, count: int = 300, **kw: str) -> list[dict | None]:
    return [
        scored_object(generate(LLMRequest(system="s", user=_probe_prompt(n, **kw)), config).text)
        for n in range(count)
    ]


def test_same_seed_same_bytes_and_seed_matters():
    request = LLMRequest(system="s", user=_probe_prompt(1))
    config = _config(grounding=0.5, reading=0.5, position_bias=0.2)
    first = generate(request, config)
    assert generate(request, config).text == first.text
    outputs = {generate(request, _config(seed=s, grounding=0.5, position_bias=0.2)).text for s in range(12)}
    assert len(outputs) > 1


def test_perfect_grounding_picks_the_overlapping_candidate_and_reads_the_packet():
    packet = '[{"anchor": "R1", "text": "4.0 kg"}]'
    answers = _answers(_config(), count=20, packet=packet)
    assert answers == [{"read": "4.0 kg", "owner": "E3"}] * 20


def test_position_bias_answers_the_first_listed_candidate():
    answers = _answers(_config(position_bias=1.0), count=50)
    assert {a["owner"] for a in answers} == {"E2"}


def test_grounding_keep_rate_and_image_reliance():
    # No images attached and no packet: keep probability = grounding × (1 − image_reliance)².
    careful = _answers(_config(grounding=0.9, image_reliance=0.0))
    reliant = _answers(_config(grounding=0.9, image_reliance=0.6))
    with_packet = _answers(
        _config(grounding=0.9, image_reliance=0.6), packet='[{"anchor": "R1", "text": "m"}]'
    )
    share = {
        name: sum(a["owner"] == "E3" for a in answers) / len(answers)
        for name, answers in (("careful", careful), ("reliant", reliant), ("packet", with_packet))
    }
    assert 0.83 <= share["careful"] <= 0.96
    assert 0.08 <= share["reliant"] <= 0.24  # 0.9 × 0.16 = 0.144
    assert 0.83 <= share["packet"] <= 0.96  # the packet gives back what the image alone did not


def test_reading_noise_misreads_at_about_its_rate():
    packet = '[{"anchor": "R1", "text": "4.0 kg"}]'
    answers = _answers(_config(reading=0.5), packet=packet)
    kept = sum(a["read"] == "4.0 kg" for a in answers) / len(answers)
    assert 0.4 <= kept <= 0.6
    assert all(a["read"] != "" for a in answers)


def test_format_failures_do_not_parse_at_about_their_rate():
    answers = _answers(_config(format_failure=0.25), count=400)
    failures = sum(a is None for a in answers)
    assert 0.19 * 400 <= failures <= 0.31 * 400
    assert failures == sum(
        a is None for a in _answers(_config(format_failure=0.25), count=400)
    )  # deterministic


def test_profile_values_are_checked():
    result = generate(LLMRequest(system="s", user=_probe_prompt(1)), _config(reading=1.5))
    assert "profile.reading must be between 0 and 1" in result.error
    assert result.error_kind == ErrorKind.CONFIG


def test_profile_from_extra():
    assert SkillProfile.from_extra({}) is None
    assert SkillProfile.from_extra({"profile": {"reading": 0.5}}) == SkillProfile(reading=0.5)


@pytest.mark.parametrize(
    ("problem", "question", "expected"),
    [
        (
            "A block of mass 2.0 kg on a frictionless table is pushed so that it accelerates at 2.50 m/s^2.",
            "What is the magnitude of the net horizontal force on the block?",
            (5.0, "N"),
        ),
        (
            "A stone is dropped from rest from a height of 10.0 m. Ignore air resistance and take g = 9.8 m/s^2.",
            "With what speed does it reach the ground?",
            (14.0, "m/s"),
        ),
        ("A 3 kg box.", "What is its colour?", None),
    ],
)
def test_small_solver_derives_from_the_statement(problem, question, expected):
    got = derive_answer(problem, question)
    if expected is None:
        assert got is None
    else:
        assert got[1] == expected[1] and abs(got[0] - expected[0]) < 1e-9


def test_solving_skill_on_a_choice_problem():
    user = (
        "[Problem]\nA stone is dropped from rest from a height of 10.0 m. Take g = 9.8 m/s^2.\n\n"
        "[Question]\nWith what speed does it reach the ground?\n\n"
        "[Options]\nA. 7.0 m/s\nB. 28.0 m/s\nC. 14.0 m/s\nD. 21.0 m/s\n\n"
        "[Output format]\nReason step by step, then give the letter in \\boxed{}."
    )

    def letters(config: ProviderConfig) -> list[str]:
        out = []
        for n in range(100):
            text = generate(LLMRequest(system=f"s{n}", user=user), config).text
            out.append(text.rsplit("<answer>", 1)[-1].split("</answer>")[0])
        return out

    assert letters(_config(solving=1.0)) == ["C"] * 100
    assert "C" not in letters(_config(solving=0.0))
    assert letters(_config(solving=1.0, position_bias=1.0)) == ["A"] * 100
