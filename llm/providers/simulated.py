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

Skill profiles (``extra["profile"]``, see ``SkillProfile``): a profiled model answers probe prompts from
what the request shows (the +GT packet, the marked text, Tesseract OCR of the anchor box, the candidate
overlapping the anchors most or the Kit nearest-region rule), solving prompts with a small solver over
the statement, and the debate's pruner/selector prompts by comparing with that solver; then it applies the
profile's seeded noise. Without a profile every reply above is unchanged.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ErrorKind, ProviderError
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage
from .baseline_ocr import Box, _attachment_ids, _boxes, _candidate_order, _section, nearest_candidate, ocr_box

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


# ------------------------------------------------------------------------------------------------ skill profiles
#
# A model configuration with ``extra["profile"]`` answers probes and solving prompts like a model of that
# skill. Everything it "perceives" comes from the request itself, never from a key, an answer or a target
# (the provider layer cannot even import the database): the reading is the +GT packet's text for the
# anchor when the prompt supplies one, the marked span of a text anchor, or Tesseract's OCR of the anchor's
# box on the attached image; the candidate is the one whose box overlaps the anchors' boxes most, else the
# Kit's nearest-region rule (the OCR baseline's), else the first listed. The profile then adds seeded noise.

PROFILE_FIELDS = ("reading", "grounding", "image_reliance", "position_bias", "format_failure", "solving")


@dataclass(frozen=True)
class SkillProfile:
    """Probabilities in [0, 1] that shape a simulated model's answers.

    - ``reading``: keep the perceived reading (otherwise one character of it is misread);
    - ``grounding``: keep the perceived candidate (otherwise another listed candidate);
    - ``image_reliance``: how much the model leans on the +GT packet: without one, the grounding keep
      probability is multiplied by ``1 - image_reliance`` (and by its square when no image is attached);
    - ``position_bias``: answer the first listed candidate (or option A) whatever it perceived;
    - ``format_failure``: reply with text that does not parse (prose before the JSON, or a cut object);
    - ``solving``: keep the answer its small solver derived from the problem text (otherwise a wrong one).
    """

    reading: float = 1.0
    grounding: float = 1.0
    image_reliance: float = 0.0
    position_bias: float = 0.0
    format_failure: float = 0.0
    solving: float = 1.0

    @classmethod
    def from_extra(cls, extra: dict[str, Any]) -> SkillProfile | None:
        value = extra.get("profile")
        if not isinstance(value, dict):
            return None
        fields: dict[str, float] = {}
        for name in PROFILE_FIELDS:
            if name in value:
                number = float(value[name])
                if not 0.0 <= number <= 1.0:
                    raise ProviderError(f"profile.{name} must be between 0 and 1.", kind=ErrorKind.CONFIG)
                fields[name] = number
        return cls(**fields)

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in PROFILE_FIELDS}


_OCR_CACHE: dict[tuple[str, Box], str] = {}


def _ocr_cached(data: bytes, box: Box) -> str:
    key = (hashlib.sha256(data).hexdigest(), box)
    if key not in _OCR_CACHE:
        if len(_OCR_CACHE) > 4096:
            _OCR_CACHE.clear()
        _OCR_CACHE[key] = ocr_box(data, box)
    return _OCR_CACHE[key]


def _packet_reads(user: str) -> dict[str, str]:
    """The +GT packet (``[Local reading information]``): ``[{"anchor": "R1", "text": "…"}]``, or none."""
    # Not ``_section``: the packet's one-line JSON list would itself look like a section header there.
    match = re.search(
        r"^(?:\[Local reading information\]|【局部读数信息】)\s*\n(.*?)(?=^\[[A-Z][^\]\n]*\]\s*$|^【|\Z)",
        user,
        re.S | re.M,
    )
    section = match.group(1) if match else ""
    try:
        entries = json.loads(section.strip()) if section.strip().startswith("[") else []
    except ValueError:
        return {}
    return {
        str(e["anchor"]): str(e["text"])
        for e in entries
        if isinstance(e, dict) and "anchor" in e and "text" in e
    }


def _text_anchor_reads(user: str) -> dict[str, str]:
    section = _section(user, "[Evidence locations]") or _section(user, "【证据位置】")
    return {alias: text for alias, text in re.findall(r"\[(R\d+)\](.*?)\[/\1\]", section, re.S)}


def _iou(a: Box, b: Box) -> float:
    if a.image_id != b.image_id:
        return 0.0
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter
    return inter / union if union > 0 else 0.0


def _perceived_candidate(
    anchors: list[Box], candidates: dict[str, list[Box]], order: list[str], sizes: dict[str, tuple[int, int]]
) -> str | None:
    best, best_iou = None, 0.0
    for alias in order:
        for box in candidates.get(alias, []):
            for anchor in anchors:
                overlap = _iou(anchor, box)
                if overlap > best_iou:
                    best, best_iou = alias, overlap
    if best is not None:
        return best
    if len(anchors) == 1:
        return nearest_candidate(anchors[0], candidates, order, sizes)
    return None


def _misread(text: str, rng: random.Random) -> str:
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    if digits:
        i = rng.choice(digits)
        return text[:i] + rng.choice([d for d in "0123456789" if d != text[i]]) + text[i + 1 :]
    letters = [i for i, ch in enumerate(text) if ch.isalpha()]
    if letters:
        i = rng.choice(letters)
        return text[:i] + (text[i].swapcase() if text[i].swapcase() != text[i] else "x") + text[i + 1 :]
    return text + "?"


def _broken(text: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "Here is my answer:\n" + text
    return text.rstrip().rstrip("}")


def _image_sizes(images: dict[str, bytes], boxes: Iterable[list[Box]]) -> dict[str, tuple[int, int]]:
    """Each picture's size in pixels; with no picture the coordinates are all there is (bbox_1000 on a
    square canvas)."""
    if not images:
        return {b.image_id: (1000, 1000) for group in boxes for b in group}
    from PIL import Image

    sizes: dict[str, tuple[int, int]] = {}
    for image_id, data in images.items():
        with Image.open(io.BytesIO(data)) as img:
            sizes[image_id] = img.size
    return sizes


def _owner_choice(
    config: ProviderConfig,
    request: LLMRequest,
    profile: SkillProfile,
    order: list[str],
    perceived: str,
    sight: float,
) -> tuple[str, str]:
    """The candidate the model answers and why: the first one listed (position bias), the one it perceived
    (kept, as often as its grounding and sight allow), else another candidate."""
    if _rng(config, request, "position").random() < profile.position_bias and order:
        return order[0], "position_bias"
    if _rng(config, request, "grounding").random() < profile.grounding * sight:
        return perceived, "kept"
    others = [c for c in order if c != perceived]
    owner = _rng(config, request, "grounding-other").choice(others) if others else perceived
    return owner, "other_candidate"


def _wanted_reads(template: dict[str, Any], user: str, located: dict[str, list[Box]]) -> list[str]:
    """The anchors the template asks read: its ``read`` keys, else the question's anchors, else the first
    located one."""
    wanted = list(template["read"]) if isinstance(template["read"], dict) else []
    if wanted:
        return wanted
    question = _section(user, "[Local question]") or _section(user, "【局部问题】")
    return (
        list(dict.fromkeys(re.findall(r"\b(R\d+)\b", question)))
        or [a for a in located if a.startswith("R")][:1]
    )


def _seen_text(
    alias: str,
    packet: dict[str, str],
    text_reads: dict[str, str],
    located: dict[str, list[Box]],
    images: dict[str, bytes],
) -> str:
    """What the model sees at an anchor: the evidence packet's text, the prompt's text anchor, else the OCR of
    its box in the picture ("" when there is none)."""
    if alias in packet:
        return packet[alias]
    if alias in text_reads:
        return text_reads[alias]
    if located.get(alias) and located[alias][0].image_id in images:
        box = located[alias][0]
        return _ocr_cached(images[box.image_id], box)
    return ""


def _reads(
    template: dict[str, Any],
    request: LLMRequest,
    config: ProviderConfig,
    profile: SkillProfile,
    located: dict[str, list[Box]],
    packet: dict[str, str],
    images: dict[str, bytes],
) -> dict[str, str]:
    """The anchor texts the model reports, each misread unless its reading skill keeps it."""
    if "read" not in template:
        return {}
    user = request.user
    text_reads = _text_anchor_reads(user)
    reads: dict[str, str] = {}
    for alias in _wanted_reads(template, user, located):
        seen = _seen_text(alias, packet, text_reads, located, images)
        keep = _rng(config, request, f"read-{alias}").random() < profile.reading
        reads[alias] = seen if keep or not seen else _misread(seen, _rng(config, request, f"misread-{alias}"))
    return reads


def _filled_answer(template: dict[str, Any], owner: str, reads: dict[str, str]) -> dict[str, Any]:
    """The template with the chosen candidate in every field (a list holds it alone) and the reads."""
    answer: dict[str, Any] = {}
    for key, value in template.items():
        if key == "read":
            answer[key] = reads if isinstance(value, dict) else next(iter(reads.values()), "")
        elif isinstance(value, list):
            answer[key] = [owner]
        else:
            answer[key] = owner
    return answer


def _probe_answer(
    template: dict[str, Any], request: LLMRequest, config: ProviderConfig, profile: SkillProfile
) -> tuple[str, dict[str, Any]]:
    """The reply to a probe prompt and what the model perceived (kept in the reply's ``raw``)."""
    user = request.user
    order = _candidate_order(_section(user, "[Candidates]") or _section(user, "【候选】"))
    candidates = _boxes(_section(user, "[Candidates]") or _section(user, "【候选】"))
    located = _boxes(_section(user, "[Evidence locations]") or _section(user, "【证据位置】"))
    anchors = [boxes[0] for alias, boxes in located.items() if alias.startswith("R") and boxes]
    ids = _attachment_ids(user)
    images = {(ids[i] if i < len(ids) else f"img_{i}"): image.data for i, image in enumerate(request.images)}
    sizes = _image_sizes(images, (*located.values(), *candidates.values()))
    packet = _packet_reads(user)

    perceived = _perceived_candidate(anchors, candidates, order, sizes) or (order[0] if order else "")
    sight = 1.0 if packet else (1.0 - profile.image_reliance) ** (1 if images else 2)
    owner, why = _owner_choice(config, request, profile, order, perceived, sight)
    reads = _reads(template, request, config, profile, located, packet, images)

    text = json.dumps(_filled_answer(template, owner, reads), ensure_ascii=False)
    failed = _rng(config, request, "format").random() < profile.format_failure
    if failed:
        text = _broken(text, _rng(config, request, "format-kind"))
    return text, {"perceived": perceived, "choice": why, "format_failure": failed}


# ---------------------------------------------------------------------------- a small solver for text problems

_QUANTITY = re.compile(r"(-?\d+(?:\.\d+)?)\s*(kg|m/s\^2|m/s²|m/s|km|m|N|J|W)(?![\w/])")
_UNIT_CLASS = {"m/s²": "m/s^2"}


def _problem_sections(user: str) -> tuple[str, str]:
    problem = _section(user, "[Problem]").strip()
    question = _section(user, "[Question]").strip()
    return problem, question


def derive_answer(problem: str, question: str) -> tuple[float, str] | None:
    """What a careful student gets from the statement alone, for a few textbook relations (F = ma,
    a = F/m, W = mg, v = √(2gh), K = ½mv²); None when none applies."""
    values: dict[str, float] = {}
    for number, unit in _QUANTITY.findall(problem):
        values.setdefault(_UNIT_CLASS.get(unit, unit), float(number))
    g_match = re.search(r"\bg\s*=\s*(\d+(?:\.\d+)?)", problem)
    g = float(g_match.group(1)) if g_match else 9.8
    asked = question.lower()
    if "force" in asked and "kg" in values and "m/s^2" in values:
        return values["kg"] * values["m/s^2"], "N"
    if "acceleration" in asked and "N" in values and "kg" in values and values["kg"]:
        return values["N"] / values["kg"], "m/s^2"
    if "weight" in asked and "kg" in values:
        return values["kg"] * g, "N"
    if "kinetic energy" in asked and "kg" in values and "m/s" in values:
        return 0.5 * values["kg"] * values["m/s"] ** 2, "J"
    if (
        ("speed" in asked or "velocity" in asked)
        and "m" in values
        and re.search(r"dropped|falls|from rest", problem)
    ):
        return (2 * g * values["m"]) ** 0.5, "m/s"
    return None


def _number(text: str) -> float | None:
    match = re.search(r"-?\d+(?:\.\d+)?", text or "")
    return float(match.group(0)) if match else None


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 0.01 * max(abs(a), abs(b), 1e-12)


def _options(user: str) -> dict[str, str]:
    return dict(re.findall(r"^\s*\(?([A-H])[.):]\s+(.+)$", _section(user, "[Options]"), re.M))


def _correct_option(options: dict[str, str], derived: tuple[float, str] | None) -> str | None:
    if derived is None:
        return None
    for letter, text in options.items():
        value = _number(text)
        if value is not None and abs(value - derived[0]) <= 0.05 * max(abs(derived[0]), 1e-12):
            return letter
    return None


def _profiled_solution(request: LLMRequest, config: ProviderConfig, profile: SkillProfile) -> str:
    user = request.user
    derived = derive_answer(*_problem_sections(user))
    options = _options(user)
    letters = sorted(options) or _option_letters(user)
    keep = _rng(config, request, "solve").random() < profile.solving
    pick = _rng(config, request, "solve-other")
    if letters:
        correct = _correct_option(options, derived)
        if _rng(config, request, "position").random() < profile.position_bias:
            answer = letters[0]
        elif correct and keep:
            answer = correct
        else:
            others = [letter for letter in letters if letter != correct]
            answer = pick.choice(others or letters)
    elif derived is not None:
        value = derived[0] if keep else derived[0] * pick.choice((2.0, 0.5, 1.5, 3.0))
        answer = f"{value:.3g} {derived[1]}"
    else:
        answer = f"{round(pick.uniform(0.5, 50.0), 2)} {pick.choice(SOLVE_UNITS)}"
    if _rng(config, request, "format").random() < profile.format_failure:
        return "<reasoning>Simulated reasoning: I could not finish the calculation."
    reasoning = (
        "Simulated reasoning: list the given quantities, apply the governing relation and substitute."
        if derived
        else "Simulated reasoning: no relation I know fits the statement; this is an estimate."
    )
    return f"<reasoning>{reasoning} The final answer is \\boxed{{{answer}}}.</reasoning>\n<answer>{answer}</answer>"


def _profiled_judgement(
    template: dict[str, Any], request: LLMRequest, config: ProviderConfig, profile: SkillProfile
) -> dict[str, Any] | None:
    """The debate pruner ({"label": yes|no|not sure}) and selector ({"choice": n|abstain}): the model
    compares the candidates' answers with what its own small solver derives; None for other templates."""
    user = request.user
    derived = derive_answer(*_problem_sections(user))
    options = _options(user)
    honest = _rng(config, request, "judge").random() < profile.solving

    def right(answer: str) -> bool | None:
        if derived is None:
            return None
        if options:
            return answer.strip().upper() == (_correct_option(options, derived) or "?")
        return _close(_number(answer), derived[0])

    if set(template) == {"label"}:
        candidate = _section(user, "[Candidate final answer]").strip()
        verdict = right(candidate)
        if verdict is None:
            return {"label": "not sure"}
        return {"label": "yes" if verdict == honest else "no"}
    if set(template) == {"choice"}:
        listed = re.findall(r"^Candidate (\d+) \(answer: (.*)\):$", user, re.M)
        good = [n for n, answer in listed if right(answer)]
        if good and honest:
            return {"choice": good[0]}
        return None  # no better idea: the placeholder draw
    return None


def _is_probe(user: str, template: dict[str, Any]) -> bool:
    candidates = _section(user, "[Candidates]") or _section(user, "【候选】")
    return bool(_candidate_order(candidates)) and "visual_nodes" not in template


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
        profile = SkillProfile.from_extra(config.extra)
        template = _output_template(request.user)
        perception: dict[str, Any] | None = None
        if profile and isinstance(template, dict) and _is_probe(request.user, template):
            text, perception = _probe_answer(template, request, config, profile)
        elif template is None and _wants_free_form(request.user, request.system):
            text = (
                _profiled_solution(request, config, profile)
                if profile
                else _free_form_answer(request.user, rng)
            )
        else:
            judged = (
                _profiled_judgement(template, request, config, profile)
                if profile and isinstance(template, dict)
                else None
            )
            answer = (
                judged
                if judged is not None
                else _fill(template, request.user, len(request.images), rng)
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
            raw={
                "simulated": True,
                "seed": config.extra.get("seed", 0),
                "fault": fault,
                **({"profile": profile.as_dict()} if profile else {}),
                **({"perception": perception} if perception else {}),
            },
        )
