"""``simulated``: an offline, deterministic, seedable model for the demo and the benchmarks.

Settings (``extra``): ``seed`` (int), ``latency_ms`` (number or ``[low, high]``), ``faults``
(``{"429": p, "500": p, "timeout": p, "malformed": p, "refusal": p, "truncation": p}``: each
attempt draws once), ``fault_sequence`` (faults by attempt number, e.g. ``["429", "429"]`` fails
the first two attempts of every request), ``retry_after`` (seconds sent with simulated 429s).

The answer is what the prompt's ``[Output format]`` section asks for: its JSON template, with
visual nodes filled in for a Pass 1 skeleton (one region per listed image) and candidate IDs
chosen by the seeded generator for a probe. Same seed + same request → same bytes.

Placeholder convention for JSON output templates (any nesting; other helpers' prompts rely on it).
A string value that is exactly one of these placeholders is replaced, drawn from a generator seeded
by the request (its own stream, so the draws above are unchanged):

- ``"<one of: a | b | c>"`` → one of the alternatives (a string, surrounding spaces stripped);
- ``"<number between X and Y>"`` → a JSON number uniformly in [X, Y], rounded to 2 decimals;
- ``"<svg>"`` → a small valid SVG document (a string);
- ``"<text>"`` → ``"simulated text"``.

Free-form answers (solving prompts): when the ``[Output format]`` section is not JSON, or the prompt
asks for ``\\boxed{}``, the reply is ``<reasoning>… \\boxed{X}.</reasoning>`` then ``<answer>X</answer>``
with a seeded final answer X: a random option letter when the prompt lists options (lines ``A. …``, ``(A) …``
or ``A) …``), else a seeded number with a unit. Prompts without an ``[Output format]`` section and
without ``\\boxed`` keep the old reply ``{"answer": "simulated"}``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from typing import Any

from ..errors import ErrorKind, ProviderError
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage

FAULTS = ("429", "500", "503", "timeout", "400", "malformed", "refusal", "truncation")


def _rng(config: ProviderConfig, request: LLMRequest, salt: str) -> random.Random:
    seed = hashlib.sha256(
        f"{config.extra.get('seed', 0)}|{request.fingerprint()}|{salt}".encode()
    ).hexdigest()
    return random.Random(int(seed[:16], 16))


def _output_template(user: str) -> Any:
    match = re.search(r"\[Output format\]\s*\n(.+)", user, re.S)
    if not match:
        return None
    text = match.group(1).strip()
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return value


def _listed_images(user: str) -> list[str]:
    section = re.search(r"\[Images\]\s*\n(.*?)(?:\n\[|\Z)", user, re.S)
    if not section:
        return []
    return re.findall(r"^(\w+):", section.group(1), re.M)


def _fill(template: Any, user: str, images: int, rng: random.Random) -> Any:
    if (
        isinstance(template, dict)
        and "visual_nodes" in template
        and not template["visual_nodes"]
        and "physical_nodes" not in template
    ):
        ids = _listed_images(user) or [f"img_{n}" for n in range(images)]
        nodes = []
        for index, image_id in enumerate(ids, start=1):
            x0, y0 = rng.randrange(0, 400), rng.randrange(0, 400)
            nodes.append(
                {
                    "id": f"v{index:03d}",
                    "type": "region",
                    "subtype": "diagram",
                    "text": "",
                    "image_id": image_id,
                    "bbox_1000": [x0, y0, x0 + rng.randrange(100, 600), y0 + rng.randrange(100, 600)],
                    "keypoints_1000": [],
                    "center_1000": [-1, -1],
                    "radius_1000": -1,
                    "confidence": "low",
                }
            )
        return {**template, "visual_nodes": nodes}
    if isinstance(template, dict):
        candidates = re.findall(r"^(E\d+):", user, re.M)
        chosen = rng.choice(candidates) if candidates else "E1"
        text = json.dumps(template, ensure_ascii=False)
        text = text.replace("<candidate ID>", chosen).replace("<候选编号>", chosen)
        text = text.replace("<transcription>", "m").replace("<转写>", "m")
        return json.loads(text)
    return template


_ONE_OF = re.compile(r"^<one of:\s*(.+?)\s*>$", re.S)
_NUMBER_BETWEEN = re.compile(r"^<number between\s+(-?\d+(?:\.\d+)?)\s+and\s+(-?\d+(?:\.\d+)?)\s*>$")
SIMULATED_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100" viewBox="0 0 100 100">'
    '<rect x="10" y="10" width="80" height="80" fill="none" stroke="black"/>'
    '<line x1="10" y1="90" x2="90" y2="10" stroke="black"/></svg>'
)
SOLVE_UNITS = ("m/s", "N", "J", "m", "s", "kg", "W", "V", "A", "m/s^2")


def _placeholder(value: str, rng: random.Random) -> Any:
    one_of = _ONE_OF.match(value)
    if one_of:
        choices = [c.strip() for c in one_of.group(1).split("|") if c.strip()]
        return rng.choice(choices) if choices else value
    between = _NUMBER_BETWEEN.match(value)
    if between:
        low, high = sorted((float(between.group(1)), float(between.group(2))))
        return round(rng.uniform(low, high), 2)
    if value == "<svg>":
        return SIMULATED_SVG
    if value == "<text>":
        return "simulated text"
    return value


def _fill_placeholders(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {k: _fill_placeholders(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_placeholders(v, rng) for v in value]
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return _placeholder(value, rng)
    return value


def _wants_free_form(user: str, system: str) -> bool:
    """A solving prompt: asks for ``\\boxed{}``, or has an ``[Output format]`` section that is not JSON."""
    if "\\boxed" in user or "\\boxed" in system:
        return True
    return re.search(r"\[Output format\]", user) is not None and _output_template(user) is None


def _option_letters(user: str) -> list[str]:
    letters = re.findall(r"^\s*\(?([A-H])[.):]\s+\S", user, re.M)
    return sorted(set(letters))


def _free_form_answer(user: str, rng: random.Random) -> str:
    letters = _option_letters(user)
    if letters:
        answer = rng.choice(letters)
        reasoning = f"Simulated reasoning: comparing the options, option {answer} fits best."
    else:
        answer = f"{round(rng.uniform(0.5, 50.0), 2)} {rng.choice(SOLVE_UNITS)}"
        reasoning = "Simulated reasoning: apply the governing law to the given quantities and solve."
    return f"<reasoning>{reasoning} The final answer is \\boxed{{{answer}}}.</reasoning>\n<answer>{answer}</answer>"


class SimulatedProvider:
    def __init__(self, sleep: Any = time.sleep) -> None:
        self.sleep = sleep

    def _fault(self, config: ProviderConfig, request: LLMRequest, attempt: int) -> str | None:
        sequence = config.extra.get("fault_sequence") or []
        if attempt <= len(sequence) and sequence[attempt - 1]:
            return str(sequence[attempt - 1])
        faults = config.extra.get("faults") or {}
        if faults:
            draw = _rng(config, request, f"fault-{attempt}").random()
            edge = 0.0
            for name in FAULTS:
                edge += float(faults.get(name, 0))
                if draw < edge:
                    return name
        return None

    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        rng = _rng(config, request, "answer")
        latency = config.extra.get("latency_ms", 0)
        if isinstance(latency, list | tuple):
            latency = _rng(config, request, f"latency-{attempt}").uniform(
                float(latency[0]), float(latency[1])
            )
        if latency:
            self.sleep(float(latency) / 1000.0)
        fault = self._fault(config, request, attempt)
        if fault in ("429", "500", "503", "400"):
            status = int(fault)
            raise ProviderError(
                f"HTTP {status}: simulated",
                kind={429: ErrorKind.RATE_LIMIT, 400: ErrorKind.BAD_REQUEST}.get(status, ErrorKind.SERVER),
                status_code=status,
                retry_after=config.extra.get("retry_after") if status == 429 else None,
            )
        if fault == "timeout":
            raise ProviderError("timeout: simulated", kind=ErrorKind.TIMEOUT)
        template = _output_template(request.user)
        if template is None and _wants_free_form(request.user, request.system):
            text = _free_form_answer(request.user, rng)
        else:
            answer = (
                _fill(template, request.user, len(request.images), rng)
                if template is not None
                else {"answer": "simulated"}
            )
            answer = _fill_placeholders(answer, _rng(config, request, "placeholders"))
            text = json.dumps(answer, ensure_ascii=False, indent=1)
        finish = "stop"
        if fault == "malformed":
            text = text[: max(len(text) // 2, 1)] + " <<simulated garbage"
        elif fault == "refusal":
            text, finish = "I can't help with that request.", "refusal"
        elif fault == "truncation":
            text, finish = text[: max(len(text) // 3, 1)], "length"
        usage = Usage(
            input_tokens=(len(request.system) + len(request.user)) // 4 + 258 * len(request.images),
            output_tokens=max(len(text) // 4, 1),
        )
        return ProviderReply(
            text=text,
            finish_reason=finish,
            usage=usage,
            raw={"simulated": True, "seed": config.extra.get("seed", 0), "fault": fault},
        )
