"""The simulated provider answers solving prompts and fills the JSON placeholder convention, deterministically,
without changing what it returns for the existing prompt kinds."""

from __future__ import annotations

import json
import re

from llm import LLMRequest, ProviderConfig, generate
from llm.providers.simulated import SIMULATED_SVG

CONFIG = ProviderConfig(name="sim", provider="simulated", model="sim", extra={"seed": 7})


def _ask(user: str, system: str = "s", config: ProviderConfig = CONFIG) -> str:
    return generate(LLMRequest(system=system, user=user), config).text


def test_choice_prompt_gets_a_boxed_option_letter():
    user = "[Problem]\nA ball.\n\n[Options]\nA. 1 m\nB. 2 m\nC. 3 m\n\n[Output format]\nAnswer in \\boxed{}."
    text = _ask(user)
    assert text.startswith("<reasoning>")
    letter = re.search(r"\\boxed\{([^}]*)\}", text).group(1)
    assert letter in {"A", "B", "C"}
    assert f"<answer>{letter}</answer>" in text
    assert _ask(user) == text  # same seed, same request, same bytes


def test_open_prompt_gets_a_boxed_number_with_unit():
    text = _ask("[Problem]\nFind v.\n\n[Output format]\nWrite a worked solution ending with a boxed answer.")
    value = re.search(r"\\boxed\{([^}]*)\}", text).group(1)
    number, unit = value.split(" ", 1)
    assert 0.5 <= float(number) <= 50 and unit


def test_seed_changes_the_answer_stream():
    user = "[Problem]\nFind v.\n\n[Output format]\nAnswer in \\boxed{}."
    answers = {
        _ask(user, config=ProviderConfig(name="s", provider="simulated", model="m", extra={"seed": s}))
        for s in range(6)
    }
    assert len(answers) > 1


def test_json_placeholders_are_filled():
    template = {
        "label": "<one of: yes | no | not sure>",
        "score": "<number between 0.2 and 0.4>",
        "nested": [{"svg": "<svg>", "note": "<text>"}],
        "fixed": "keep <me>",
    }
    text = _ask("[Task]\nJudge.\n[Output format]\n" + json.dumps(template))
    answer = json.loads(text)
    assert answer["label"] in {"yes", "no", "not sure"}
    assert isinstance(answer["score"], float) and 0.2 <= answer["score"] <= 0.4
    assert answer["score"] == round(answer["score"], 2)
    assert answer["nested"][0] == {"svg": SIMULATED_SVG, "note": "simulated text"}
    assert answer["fixed"] == "keep <me>"
    assert SIMULATED_SVG.startswith("<svg") and SIMULATED_SVG.endswith("</svg>")


def test_existing_prompt_kinds_are_unchanged():
    # A probe prompt: the candidate draw is unchanged by the placeholder stream.
    probe = (
        '[Candidates]\nE1: img_0 {}\nE2: img_0 {}\nE3: img_0 {}\n[Output format]\n{"owner": "<candidate ID>"}'
    )
    assert json.loads(_ask(probe))["owner"] in {"E1", "E2", "E3"}
    assert _ask(probe) == _ask(probe)
    # A prompt without an output format and without \boxed keeps the old reply.
    assert json.loads(_ask("Just say something.")) == {"answer": "simulated"}
