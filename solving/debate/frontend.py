"""Visual information extraction front-end by level (Debate §3.2, Table 1). Django-free.

``run_frontend`` turns a public problem (text, images, options) into what the solvers read:

=======  ===========================  =========================================================
Level    Modules (``LEVEL_MODULES``)  Output
=======  ===========================  =========================================================
1        none                         the text only; images dropped; no steps
2        reconstructor                a self-contained statement grounded in the figure
3        visual_extractor + recon.    + one SVG of the diagram
4        parser + extractor + recon.  the image is split into text (OCR) and a cleaned diagram
5        none                         original text and image (the single solver reads both)
=======  ===========================  =========================================================

Model stages go through the injected ``call(stage, request)``: "crop_propose", "crop_verify",
"ocr", "visual_extract", "reconstruct". The caller records turns, tokens and cost; an exception
it raises propagates. With ``call=None``, a failed call or an output that does not parse, every
stage falls back deterministically (profile-split cropper, tesseract OCR, extractor and
reconstructor skipped with the reason recorded), so the pipeline always yields a problem.
Every step, deterministic or model, is listed in order in ``FrontendResult.steps``.

Only the public problem reaches a prompt: the function never receives answers or solutions.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template
from typing import Any

from PIL import Image

from llm.types import ImageInput, LLMRequest, LLMResult
from solving.debate import imaging
from solving.debate.imaging import ImageDecodeError, Split
from solving.debate.svg import SvgError, clean_svg, truncate_svg

ModelCall = Callable[[str, LLMRequest], LLMResult]

LEVEL_MODULES: dict[int, frozenset[str]] = {
    1: frozenset(),
    2: frozenset({"reconstructor"}),
    3: frozenset({"visual_extractor", "reconstructor"}),
    4: frozenset({"parser", "visual_extractor", "reconstructor"}),
    5: frozenset(),
}

PROPOSALS = 3  # cropper proposals voted on (Debate §3.2.1)
MAX_MOVE = 0.5  # a verifier may move the boundary by at most half the image per iteration
DEFAULT_MOVE = 0.05  # … and by this much when it names a direction without an amount
REPLY_RECORD_CHARS = 4000  # model replies are copied into step details up to this length

CROP_SYSTEM = (
    "You locate layout regions in images of physics problems. You answer only with the JSON "
    "object requested, without commentary."
)
CROP_PROPOSE_PROMPT = Template("""\
[Task]
(Independent proposal $number of $total.) The attached image is a physics problem rendered as a single picture: one contiguous block of \
problem text and one diagram. The text block sits either above the diagram or to its left, so a \
single straight line separates them.

Decide:
1. the orientation of that separating line: "horizontal" (text above the diagram) or \
"vertical" (text left of the diagram);
2. on which side the text block lies: "top" or "left";
3. where the line lies, as a fraction of the image height (horizontal line) or width (vertical \
line), measured from the top or left edge.

Put the line in the empty gap between the last text line and the diagram. Never cut through \
text, labels, arrows or any part of the figure; if unsure, prefer keeping a label with the \
diagram.

[Output format]
{"orientation": "<one of: horizontal | vertical>", "text_side": "<one of: top | left>", \
"split_fraction": "<number between 0 and 1>"}
""")
CROP_VERIFY_PROMPT = Template("""\
[Task]
The attached image is a physics problem picture with a candidate boundary drawn as a thick red \
$orientation line at $percent% of the image $dimension. Everything on the $text_side side of the \
line will be read as problem text, everything on the other side as the diagram.

Check whether the split is clean: no text line, symbol, label, arrow or part of the figure may \
touch or cross the red line, and no text may remain on the diagram side. If it is not clean, \
say in which direction the line must move ($directions) and by how much, as a fraction of the \
image $dimension.

[Output format]
{"clean": "<one of: yes | no>", "move": "<one of: $directions | none>", \
"amount": "<number between 0 and 1>"}
""")
OCR_SYSTEM = "You transcribe physics problem text from images exactly. You never solve, explain or comment."
OCR_PROMPT = Template("""\
[Task]
Transcribe the problem text in the attached image. Keep every word, number, unit, symbol and \
answer option exactly as printed, in reading order. Write mathematics in LaTeX (inline $$…$$). \
Do not add a title, remarks, an explanation or a solution, and do not describe the image. If a \
character is illegible, write [illegible] in its place.

[Output format]
{"text": "<text>"}
""")
VISUAL_EXTRACT_SYSTEM = (
    "You convert physics diagrams into faithful SVG. You copy what is drawn; you never solve, "
    "simplify or add anything."
)
VISUAL_EXTRACT_PROMPT = Template("""\
[Task]
Redraw the attached physics diagram as ONE self-contained SVG document.

Preserve: the geometry and relative positions, topology and connections (wires, strings, \
contacts), every label, numerical value and unit exactly as printed, arrows with their \
directions, angle markings, dashed versus solid lines, shaded regions and axes with their ticks.
Rules:
- Use only basic SVG shapes (line, polyline, polygon, path, rect, circle, ellipse, text, g, \
marker); no scripts, no images, no external references, no styles loaded from elsewhere.
- Write subscripts and superscripts inline in the text (N_1, v_0, x^2), not as shifted tspans.
- Draw only what is in the figure; where something is unreadable, add a text element \
"not shown" near it instead of guessing.
- Keep the SVG under $cap characters.
$reask
The problem text, for reference only (do not draw it):
$problem_text

[Output format]
{"svg": "<svg>"}
""")
RECONSTRUCT_SYSTEM = (
    "You rewrite physics problems into self-contained text, grounded strictly in the given figure "
    "and text. You never solve the problem."
)
RECONSTRUCT_PROMPT = Template("""\
[Task]
Rewrite the problem below, together with the attached figure$svg_hint, into ONE self-contained \
problem statement that a reader without the figure can solve.

Rules (no hallucination):
- State only facts that are visible in the figure or written in the text. Do not infer physical \
relationships, directions, reference frames or values that are not shown.
- Keep every given number, unit, symbol, angle marking and answer option exactly as written.
- Describe the figure's layout, labels, connections and directions in words.
- If something is illegible or ambiguous, write "not shown" (or say it is ambiguous) rather \
than guessing.
- Do not solve the problem, do not hint at the method and do not state any result.

[Problem text]
$problem_text
$options$svg_block
[Output format]
{"problem": "<text>"}
""")
REASK_NOTE = (
    "\nYour previous answer could not be used ({reason}). Produce a simpler, complete SVG "
    "that is well-formed and well under the character limit.\n"
)

_GARBAGE = re.compile(
    r"^\s*(sure|certainly|here is|here's|i (cannot|can't|am unable|could not)|as an ai|sorry|"
    r"the (attached )?image (shows|contains|depicts)|unfortunately)\b",
    re.I,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class ProblemInput:
    text: str
    images: tuple[ImageInput, ...]
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FrontendSwitches:
    cropper: bool = True
    sharpen: bool = True
    ocr: str = "model"  # "model" | "tesseract"
    visual_extractor: bool = True
    reconstructor: bool = True
    verify_iterations: int = 5
    svg_char_cap: int = 12000


@dataclass(frozen=True)
class FrontendStep:
    stage: str
    detail: dict[str, Any]  # JSON-serialisable


@dataclass(frozen=True)
class FrontendResult:
    problem_text: str
    images: tuple[ImageInput, ...]
    svg: str | None
    steps: tuple[FrontendStep, ...]


@dataclass
class _Run:
    call: ModelCall | None
    switches: FrontendSwitches
    steps: list[FrontendStep] = field(default_factory=list)

    def step(self, stage: str, **detail: Any) -> None:
        self.steps.append(FrontendStep(stage, detail))

    def ask(
        self, stage: str, system: str, user: str, images: tuple[ImageInput, ...]
    ) -> tuple[str | None, dict[str, Any]]:
        """One model call; returns (reply text or None when the call failed, a record for the step)."""
        assert self.call is not None
        result = self.call(stage, LLMRequest(system=system, user=user, images=images))
        record = {
            "kind": "model",
            "status": result.status,
            "finish_reason": result.finish_reason,
            "reply": (result.text or "")[:REPLY_RECORD_CHARS],
        }
        if not result.ok:
            record["error"] = result.error or "the model call failed"
            return None, record
        return result.text or "", record


def json_object(reply: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (code fences and chatter around it tolerated), or None."""
    if not reply:
        return None
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", reply):
        try:
            value, _ = decoder.raw_decode(reply, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _fraction(value: object) -> float | None:
    try:
        number = float(str(value).strip().rstrip("%")) if not isinstance(value, bool) else None
    except ValueError:
        return None
    if number is None or number != number:
        return None
    if isinstance(value, str) and value.strip().endswith("%"):
        number /= 100
    return number if 0 < number < 1 else None


def _choice(value: object, allowed: tuple[str, ...]) -> str | None:
    text = str(value).strip().lower() if isinstance(value, str) else ""
    return text if text in allowed else None


def numbers_in(text: str) -> list[str]:
    """Numeric tokens of a text (``2.5``, ``30``, ``1,5``) in order, for the preservation check."""
    return _NUMBER.findall(text or "")


def missing_numbers(original: str, rewritten: str) -> list[str]:
    """Numbers of ``original`` that do not appear as tokens of ``rewritten`` (sorted, distinct)."""
    present = set(numbers_in(rewritten))
    return sorted({number for number in numbers_in(original) if number not in present})


def looks_like_garbage(text: str) -> bool:
    """Meta-commentary instead of a transcription or a statement (Debate §3.2.1 'garbage')."""
    return not (text or "").strip() or bool(_GARBAGE.match(text))


# --- Cropper -----------------------------------------------------------------------------------


def _propose(run: _Run, image: ImageInput) -> tuple[Split | None, dict[str, Any]]:
    proposals: list[dict[str, Any]] = []
    for index in range(PROPOSALS):
        user = CROP_PROPOSE_PROMPT.substitute(number=index + 1, total=PROPOSALS)
        reply, record = run.ask("crop_propose", CROP_SYSTEM, user, (image,))
        parsed = json_object(reply) or {}
        proposal = {
            "orientation": _choice(parsed.get("orientation"), ("horizontal", "vertical")),
            "text_side": _choice(parsed.get("text_side"), ("top", "left")),
            "fraction": _fraction(parsed.get("split_fraction")),
        }
        valid = proposal["orientation"] is not None and proposal["fraction"] is not None
        run.step("crop_propose", **record, proposal=index + 1, parsed=proposal, valid=valid)
        if valid:
            proposals.append(proposal)
    if not proposals:
        return None, {"reason": "no proposal parsed"}
    orientations = Counter(p["orientation"] for p in proposals)
    top = max(orientations.values())
    # Majority vote; a tie goes to the orientation proposed first.
    orientation = next(p["orientation"] for p in proposals if orientations[p["orientation"]] == top)
    sides = Counter(p["text_side"] for p in proposals if p["text_side"])
    side_vote = (
        max(sides, key=lambda s: (sides[s], s == ("top" if orientation == "horizontal" else "left")))
        if sides
        else None
    )
    fraction = float(statistics.median(p["fraction"] for p in proposals if p["orientation"] == orientation))
    split = Split(orientation, fraction)
    vote = {
        "orientation_votes": dict(orientations),
        "text_side_votes": dict(sides),
        "orientation": orientation,
        "text_side": split.text_side,
        "fraction": fraction,
    }
    if side_vote and side_vote != split.text_side:
        vote["text_side_conflict"] = (
            f"voted {side_vote}; a {orientation} boundary puts the text {split.text_side}"
        )
    return split, vote


def _verify(run: _Run, img: Image.Image, split: Split) -> tuple[Split | None, int]:
    """Move the boundary until the verifier calls it clean: (accepted split or None, iterations)."""
    horizontal = split.orientation == "horizontal"
    directions = ("up", "down") if horizontal else ("left", "right")
    for iteration in range(1, run.switches.verify_iterations + 1):
        user = CROP_VERIFY_PROMPT.substitute(
            orientation=split.orientation,
            percent=f"{split.fraction * 100:.1f}",
            dimension="height" if horizontal else "width",
            text_side=split.text_side,
            directions=" | ".join(directions),
        )
        reply, record = run.ask(
            "crop_verify", CROP_SYSTEM, user, (imaging.encode_png(imaging.draw_boundary(img, split)),)
        )
        parsed = json_object(reply) or {}
        clean = _choice(parsed.get("clean"), ("yes", "no"))
        detail = {**record, "iteration": iteration, "fraction": split.fraction, "clean": clean}
        if clean is None:
            run.step("crop_verify", **detail, outcome="unparsed")
            return None, iteration
        if clean == "yes":
            run.step("crop_verify", **detail, outcome="clean")
            return split, iteration
        move = _choice(parsed.get("move"), directions)
        amount = _fraction(parsed.get("amount"))
        if move is None:
            run.step("crop_verify", **detail, outcome="not clean, no usable move")
            continue
        step = min(amount if amount is not None else DEFAULT_MOVE, MAX_MOVE)
        sign = -1 if move in ("up", "left") else 1
        moved = Split(split.orientation, min(max(split.fraction + sign * step, 0.02), 0.98))
        run.step(
            "crop_verify", **detail, outcome="moved", move=move, amount=step, new_fraction=moved.fraction
        )
        split = moved
    return None, run.switches.verify_iterations


def _crop(run: _Run, img: Image.Image, image: ImageInput) -> Split:
    fallback = imaging.profile_split(img)
    reason = ""
    if run.call is None:
        reason = "no model: deterministic split"
    else:
        proposed, vote = _propose(run, image)
        if proposed is None:
            reason = f"{vote['reason']}: deterministic split"
        elif run.switches.verify_iterations <= 0:
            run.step(
                "crop",
                kind="deterministic",
                method="model_unverified",
                **_split_record(img, proposed),
                vote=vote,
            )
            return proposed
        else:
            accepted, iterations = _verify(run, img, proposed)
            if accepted is not None:
                run.step(
                    "crop",
                    kind="deterministic",
                    method="model_verified",
                    iterations=iterations,
                    **_split_record(img, accepted),
                    vote=vote,
                )
                return accepted
            reason = f"verification failed after {iterations} iteration(s): re-cropped without verification"
    run.step("crop", kind="deterministic", method="fallback", reason=reason, **_split_record(img, fallback))
    return fallback


def _split_record(img: Image.Image, split: Split) -> dict[str, Any]:
    return {
        "orientation": split.orientation,
        "text_side": split.text_side,
        "fraction": round(split.fraction, 6),
        "boundary_px": imaging.boundary_pixel(img.size, split),
        "image_size": list(img.size),
    }


# --- OCR ---------------------------------------------------------------------------------------


def _tesseract(run: _Run, region: Image.Image, reason: str) -> str:
    try:
        text = imaging.tesseract_text(region)
    except RuntimeError as exc:
        run.step("ocr_tesseract", kind="deterministic", outcome="failed", reason=reason, error=str(exc))
        return ""
    run.step("ocr_tesseract", kind="deterministic", outcome="ok", reason=reason, chars=len(text), text=text)
    return text


def _ocr(run: _Run, region: Image.Image) -> str:
    if region.width == 0 or region.height == 0:
        run.step("ocr", kind="deterministic", outcome="skipped", reason="empty text region")
        return ""
    if run.switches.ocr == "tesseract":
        return _tesseract(run, region, "switch: tesseract OCR")
    if run.call is None:
        return _tesseract(run, region, "no model: tesseract OCR")
    reply, record = run.ask("ocr", OCR_SYSTEM, OCR_PROMPT.substitute(), (imaging.encode_png(region),))
    parsed = json_object(reply)
    text = parsed.get("text") if parsed else None
    if not isinstance(text, str):
        run.step("ocr", **record, outcome="unparsed")
        return _tesseract(run, region, "model OCR did not parse: tesseract fallback")
    if looks_like_garbage(text):
        run.step("ocr", **record, outcome="garbage")
        return _tesseract(run, region, "model OCR was commentary, not text: tesseract fallback")
    run.step("ocr", **record, outcome="ok", chars=len(text))
    return text.strip()


# --- Visual extractor --------------------------------------------------------------------------


def _svg_from(reply: str | None) -> tuple[str | None, int, str]:
    """(clean svg or None, its length, why not / 'ok')."""
    if reply is None:
        return None, 0, "the model call failed"
    parsed = json_object(reply)
    svg = parsed.get("svg") if parsed else None
    candidate = svg if isinstance(svg, str) else reply
    try:
        result = clean_svg(candidate)
    except SvgError as exc:
        return None, 0, str(exc)
    return result.svg, result.chars, "ok"


def _visual_extract(run: _Run, text: str, images: tuple[ImageInput, ...]) -> str | None:
    cap = run.switches.svg_char_cap
    reask = ""
    first: str | None = None
    for attempt in (1, 2):
        user = VISUAL_EXTRACT_PROMPT.substitute(cap=cap, reask=reask, problem_text=text or "(none)")
        reply, record = run.ask("visual_extract", VISUAL_EXTRACT_SYSTEM, user, images)
        svg, chars, why = _svg_from(reply)
        detail = {**record, "attempt": attempt, "chars": chars}
        if svg is not None and chars <= cap:
            run.step("visual_extract", **detail, decision="accepted")
            return svg
        if svg is not None:
            why = f"{chars} characters, over the {cap}-character cap"
            first = svg if first is None or len(svg) < len(first) else first
        run.step("visual_extract", **detail, decision="rejected", reason=why)
        reask = REASK_NOTE.format(reason=why)
    if first is None:
        run.step(
            "visual_extract", kind="deterministic", decision="skipped", reason="no usable SVG after a re-ask"
        )
        return None
    truncated, removed = truncate_svg(first, cap)
    if len(truncated) > cap:  # a cap smaller than the bare <svg> element itself
        run.step(
            "visual_extract",
            kind="deterministic",
            decision="skipped",
            reason=f"even an empty SVG exceeds the {cap}-character cap",
        )
        return None
    run.step(
        "visual_extract",
        kind="deterministic",
        decision="truncated",
        chars=len(truncated),
        elements_removed=removed,
    )
    return truncated


# --- Reconstructor -----------------------------------------------------------------------------


def _reconstruct(
    run: _Run,
    text: str,
    options: tuple[tuple[str, str], ...],
    svg: str | None,
    images: tuple[ImageInput, ...],
) -> str | None:
    options_block = (
        ("\n[Options]\n" + "\n".join(f"{label}. {body}" for label, body in options) + "\n") if options else ""
    )
    svg_block = f"\n[SVG of the figure]\n{svg}\n" if svg else ""
    user = RECONSTRUCT_PROMPT.substitute(
        svg_hint=" and its SVG transcription" if svg else "",
        problem_text=text or "(none)",
        options=options_block,
        svg_block=svg_block,
    )
    reply, record = run.ask("reconstruct", RECONSTRUCT_SYSTEM, user, images)
    parsed = json_object(reply)
    statement = parsed.get("problem") if parsed else None
    if not isinstance(statement, str):
        run.step("reconstruct", **record, outcome="unparsed", kept_original=True)
        return None
    statement = statement.strip()
    if looks_like_garbage(statement):
        run.step(
            "reconstruct", **record, outcome="rejected", reason="empty or commentary", kept_original=True
        )
        return None
    missing = missing_numbers(text, statement)
    if missing:
        run.step(
            "reconstruct",
            **record,
            outcome="rejected",
            kept_original=True,
            reason="numbers of the original text are missing",
            missing_numbers=missing,
        )
        return None
    run.step("reconstruct", **record, outcome="accepted", chars=len(statement))
    return statement


# --- Entry points ------------------------------------------------------------------------------


def _parse_image_only(run: _Run, problem: ProblemInput) -> tuple[str, tuple[ImageInput, ...]]:
    """Level-4 problem parser: (problem text, diagram images)."""
    try:
        img = imaging.load(problem.images[0])
    except ImageDecodeError as exc:
        run.step("crop", kind="deterministic", method="skipped", reason=str(exc))
        return problem.text, problem.images
    if run.switches.cropper:
        text_region, diagram = imaging.split_image(img, _crop(run, img, problem.images[0]))
    else:
        run.step(
            "crop",
            kind="deterministic",
            method="disabled",
            reason="switch: cropper off; OCR reads the whole image",
        )
        text_region, diagram = img, img
    if run.switches.sharpen and diagram.width and diagram.height:
        cleaned, report = imaging.sharpen(diagram)
        run.step(
            "sharpen",
            kind="deterministic",
            size_in=list(diagram.size),
            size_out=list(cleaned.size),
            **report.as_dict(),
        )
        diagram = cleaned
    else:
        run.step(
            "sharpen",
            kind="deterministic",
            outcome="skipped",
            reason="switch: sharpening off" if not run.switches.sharpen else "empty diagram region",
        )
    ocr_text = _ocr(run, text_region)
    text = "\n\n".join(part for part in (ocr_text.strip(), problem.text.strip()) if part)
    return text, (imaging.encode_png(diagram),) + problem.images[1:]


def run_frontend(
    problem: ProblemInput,
    *,
    level: int,
    call: ModelCall | None,
    switches: FrontendSwitches = FrontendSwitches(),
) -> FrontendResult:
    """Prepare ``problem`` for the solvers at ``level`` (Table 1). Raises ``ValueError`` only for an
    unknown level or OCR mode; bad images and bad model outputs become recorded fallbacks."""
    if level not in LEVEL_MODULES:
        raise ValueError(f"unknown level {level!r}: expected one of {sorted(LEVEL_MODULES)}")
    if switches.ocr not in ("model", "tesseract"):
        raise ValueError(f"unknown OCR mode {switches.ocr!r}: expected 'model' or 'tesseract'")
    if level == 1:
        return FrontendResult(problem_text=problem.text, images=(), svg=None, steps=())
    if level == 5:
        return FrontendResult(problem_text=problem.text, images=problem.images, svg=None, steps=())
    return _run_modules(problem, LEVEL_MODULES[level], call=call, switches=switches)


def _skip_reason(switched_on: bool, name: str, images: tuple[ImageInput, ...], call: ModelCall | None) -> str:
    """Why a model-backed module does not run (its switch, no figure, no model), or "" when it runs."""
    if not switched_on:
        return f"switch: {name} off"
    if not images:
        return "no figure"
    if call is None:
        return "no model"
    return ""


def _run_modules(
    problem: ProblemInput, modules: frozenset[str], *, call: ModelCall | None, switches: FrontendSwitches
) -> FrontendResult:
    """The level's modules in Table 1 order: parser (image-only input), visual extractor, reconstructor."""
    run = _Run(call=call, switches=switches)
    text, images = problem.text, problem.images
    if "parser" in modules:
        if images:
            text, images = _parse_image_only(run, problem)
        else:
            run.step("crop", kind="deterministic", method="skipped", reason="no image to parse")
    svg: str | None = None
    if "visual_extractor" in modules:
        why_not = _skip_reason(switches.visual_extractor, "visual extractor", images, call)
        if why_not:
            run.step("visual_extract", kind="deterministic", decision="skipped", reason=why_not)
        else:
            svg = _visual_extract(run, text, images)
    if "reconstructor" in modules:
        why_not = _skip_reason(switches.reconstructor, "reconstructor", images, call)
        if why_not:
            run.step("reconstruct", kind="deterministic", outcome="skipped", reason=why_not)
        else:
            statement = _reconstruct(run, text, problem.options, svg, images)
            if statement is not None:
                text = statement
    return FrontendResult(problem_text=text, images=images, svg=svg, steps=tuple(run.steps))


def compose_image_only(text: str, image: ImageInput, *, text_side: str = "top") -> ImageInput:
    """A Level-4 style image-only problem: ``text`` rendered on top or left of the diagram
    (deterministic PNG, for demos and tests). Raises ``ValueError`` on a bad side or image."""
    return imaging.compose_image_only(text, image, text_side=text_side)
