"""The visual extraction front-end (Debate §3.2, Table 1) with scripted model calls (no DB, no network)."""

import io
import json
import re
import xml.etree.ElementTree as ET
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from llm.types import ImageInput, LLMResult, OutputStatus, Usage
from solving.debate import frontend, imaging
from solving.debate.frontend import (
    LEVEL_MODULES,
    FrontendSwitches,
    ProblemInput,
    compose_image_only,
    missing_numbers,
    numbers_in,
    run_frontend,
)
from solving.debate.svg import SvgError, clean_svg, truncate_svg

TEXT = "A block of mass 2.5 kg slides down a ramp inclined at 30 degrees"
SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><line x1="0" y1="0" x2="9" y2="9"/></svg>'


def result(text: str, status: str = OutputStatus.COMPLETED) -> LLMResult:
    return LLMResult(
        text=text,
        finish_reason="stop",
        status=status,
        usage=Usage(),
        latency_ms=0,
        cost_usd=Decimal(0),
        raw={},
        attempts=[],
        error="boom" if status == OutputStatus.FAILED else "",
    )


class Scripted:
    """A ModelCall answering each stage from its queue (the last output repeats); records every call."""

    def __init__(self, **outputs):
        self.outputs = {stage: list(values) for stage, values in outputs.items()}
        self.calls = []

    def __call__(self, stage, request):
        self.calls.append((stage, request))
        queue = self.outputs.get(stage) or ["{}"]
        output = queue.pop(0) if len(queue) > 1 else queue[0]
        return output if isinstance(output, LLMResult) else result(output)

    def stages(self):
        return [stage for stage, _ in self.calls]


def good_call(**overrides):
    outputs = {
        "crop_propose": [
            json.dumps({"orientation": "horizontal", "text_side": "top", "split_fraction": 0.35})
        ],
        "crop_verify": ['{"clean": "yes", "move": "none", "amount": 0}'],
        "ocr": [json.dumps({"text": TEXT})],
        "visual_extract": [json.dumps({"svg": SVG})],
        "reconstruct": [json.dumps({"problem": f"{TEXT}; the figure shows a ramp with the block on it."})],
    }
    outputs.update(overrides)
    return Scripted(**outputs)


def diagram_png() -> ImageInput:
    img = Image.new("RGB", (300, 200), "white")
    draw = ImageDraw.Draw(img)
    draw.polygon([(20, 180), (280, 180), (280, 40)], outline="black", width=3)
    draw.rectangle((150, 90, 190, 130), outline="black", width=2)
    return imaging.encode_png(img)


@pytest.fixture(scope="module")
def composed() -> ImageInput:
    return compose_image_only(TEXT, diagram_png())


def stage_steps(result_, stage):
    return [step.detail for step in result_.steps if step.stage == stage]


def test_level_modules_follow_table_1():
    assert LEVEL_MODULES == {
        1: frozenset(),
        2: frozenset({"reconstructor"}),
        3: frozenset({"visual_extractor", "reconstructor"}),
        4: frozenset({"parser", "visual_extractor", "reconstructor"}),
        5: frozenset(),
    }


@pytest.mark.parametrize(
    "level, stages",
    [
        (1, []),
        (2, ["reconstruct"]),
        (3, ["visual_extract", "reconstruct"]),
        (4, ["crop_propose"] * 3 + ["crop_verify", "ocr", "visual_extract", "reconstruct"]),
        (5, []),
    ],
)
def test_each_level_runs_exactly_its_modules(level, stages, composed):
    call = good_call()
    out = run_frontend(
        ProblemInput(text=TEXT if level != 4 else "", images=(composed,)), level=level, call=call
    )
    assert call.stages() == stages
    if level == 1:
        assert out == frontend.FrontendResult(problem_text=TEXT, images=(), svg=None, steps=())
    elif level == 5:
        assert out == frontend.FrontendResult(problem_text=TEXT, images=(composed,), svg=None, steps=())
    else:
        assert out.problem_text.endswith("the figure shows a ramp with the block on it.")
        assert (out.svg is not None) == (level >= 3)
    if level == 4:
        (diagram,) = out.images
        assert diagram != composed
        crop = stage_steps(out, "crop")[0]
        assert crop["method"] == "model_verified" and crop["fraction"] == 0.35
        assert stage_steps(out, "sharpen")[0]["size_out"] != stage_steps(out, "sharpen")[0]["size_in"]
        ocr_prompt = dict(call.calls)["visual_extract"].user
        assert TEXT in ocr_prompt  # the OCR text is the extractor's context
    if level in (2, 3):
        assert out.images == (composed,)


def test_switches_turn_modules_off_and_record_why(composed):
    call = good_call()
    switches = FrontendSwitches(cropper=False, sharpen=False, visual_extractor=False, reconstructor=False)
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call, switches=switches)
    assert call.stages() == ["ocr"]
    assert stage_steps(out, "crop")[0]["method"] == "disabled"
    assert stage_steps(out, "sharpen")[0]["outcome"] == "skipped"
    assert stage_steps(out, "visual_extract")[0]["reason"] == "switch: visual extractor off"
    assert stage_steps(out, "reconstruct")[0]["reason"] == "switch: reconstructor off"
    assert out.images[0].data and imaging.load(out.images[0]).size == imaging.load(composed).size
    assert out.problem_text == TEXT


def test_cropper_majority_vote_on_orientation_and_median_fraction(composed):
    call = good_call(
        crop_propose=[
            json.dumps({"orientation": "horizontal", "text_side": "top", "split_fraction": 0.30}),
            json.dumps({"orientation": "vertical", "text_side": "left", "split_fraction": 0.90}),
            json.dumps({"orientation": "horizontal", "text_side": "left", "split_fraction": "0.40"}),
        ]
    )
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    crop = stage_steps(out, "crop")[0]
    assert crop["orientation"] == "horizontal" and crop["text_side"] == "top"
    assert crop["fraction"] == pytest.approx(0.35)  # median of the horizontal proposals
    assert crop["vote"]["orientation_votes"] == {"horizontal": 2, "vertical": 1}
    # The verifier saw the candidate boundary drawn in red at 35 % of the height.
    verify_request = dict(call.calls)["crop_verify"]
    shown = np.asarray(imaging.load(verify_request.images[0]))
    row = imaging.boundary_pixel((shown.shape[1], shown.shape[0]), imaging.Split("horizontal", 0.35))
    assert (shown[row, :, 0] > 200).all() and (shown[row, :, 1] < 30).all()
    assert "35.0% of the image height" in verify_request.user


def test_cropper_median_of_three_fractions(composed):
    call = good_call(
        crop_propose=[
            json.dumps({"orientation": "horizontal", "text_side": "top", "split_fraction": f})
            for f in (0.2, 0.5, 0.31)
        ]
    )
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert stage_steps(out, "crop")[0]["fraction"] == 0.31


def test_cropper_moves_the_boundary_until_the_verifier_says_clean(composed):
    call = good_call(
        crop_verify=[
            '{"clean": "no", "move": "down", "amount": 0.1}',
            '{"clean": "no", "move": "up", "amount": "0.05"}',
            '{"clean": "yes", "move": "none", "amount": 0}',
        ]
    )
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert call.stages().count("crop_verify") == 3
    verifies = stage_steps(out, "crop_verify")
    assert [v["outcome"] for v in verifies] == ["moved", "moved", "clean"]
    crop = stage_steps(out, "crop")[0]
    assert crop["method"] == "model_verified" and crop["iterations"] == 3
    assert crop["fraction"] == pytest.approx(0.40)


def test_cropper_gives_up_after_five_iterations_and_falls_back(composed):
    call = good_call(crop_verify=['{"clean": "no", "move": "up", "amount": 0.01}'])
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert call.stages().count("crop_verify") == 5
    crop = stage_steps(out, "crop")[0]
    expected = imaging.profile_split(imaging.load(composed))
    assert crop["method"] == "fallback" and "after 5 iteration" in crop["reason"]
    assert crop["fraction"] == round(expected.fraction, 6)


def test_verify_iterations_switch_bounds_the_loop(composed):
    call = good_call(crop_verify=['{"clean": "no", "move": "down", "amount": 0.01}'])
    run_frontend(
        ProblemInput(text="", images=(composed,)),
        level=4,
        call=call,
        switches=FrontendSwitches(verify_iterations=2),
    )
    assert call.stages().count("crop_verify") == 2


@pytest.mark.parametrize(
    "proposals",
    [
        ["no json at all"],
        ['{"orientation": "diagonal", "split_fraction": 0.3}'],
        ['{"orientation": "horizontal", "split_fraction": 1.7}'],
        [result("", OutputStatus.FAILED)],
    ],
)
def test_malformed_crop_proposals_fall_back_without_verification(proposals, composed):
    call = good_call(crop_propose=proposals)
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert "crop_verify" not in call.stages()
    crop = stage_steps(out, "crop")[0]
    assert crop["method"] == "fallback" and crop["reason"].startswith("no proposal parsed")
    assert not any(p["valid"] for p in stage_steps(out, "crop_propose"))


def test_unparseable_verification_falls_back(composed):
    call = good_call(crop_verify=["I think it looks fine"])
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert call.stages().count("crop_verify") == 1
    assert stage_steps(out, "crop")[0]["method"] == "fallback"


@pytest.mark.parametrize(
    "ocr_reply", ["not json", '{"text": "Sure! Here is the transcription you asked for."}', '{"text": ""}']
)
def test_bad_model_ocr_falls_back_to_tesseract(ocr_reply, composed):
    call = good_call(ocr=[ocr_reply], reconstruct=["garbage"])
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    assert stage_steps(out, "ocr")[0]["outcome"] in ("unparsed", "garbage")
    tess = stage_steps(out, "ocr_tesseract")[0]
    assert tess["outcome"] == "ok"
    assert {"block", "mass", "slides", "ramp", "inclined", "degrees"} <= set(out.problem_text.lower().split())


def test_tesseract_switch_and_no_model_read_the_composed_text(composed):
    for call, switches in ((good_call(), FrontendSwitches(ocr="tesseract")), (None, FrontendSwitches())):
        out = run_frontend(
            ProblemInput(text="Give g = 9.8 m/s^2.", images=(composed,)),
            level=4,
            call=call,
            switches=switches,
        )
        assert "ocr" not in [stage for stage, _ in getattr(call, "calls", [])]
        words = set(re.findall(r"[a-z]+", out.problem_text.lower()))
        assert {"block", "mass", "kg", "slides", "down", "ramp", "inclined", "degrees"} <= words
        assert "2.5" in out.problem_text and "30" in out.problem_text


def test_no_model_skips_extractor_and_reconstructor_with_reasons(composed):
    out = run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=None)
    assert stage_steps(out, "crop")[0]["method"] == "fallback"
    assert stage_steps(out, "visual_extract")[0] == {
        "kind": "deterministic",
        "decision": "skipped",
        "reason": "no model",
    }
    assert stage_steps(out, "reconstruct")[0]["reason"] == "no model"
    assert out.svg is None and len(out.images) == 1
    json.dumps([step.detail for step in out.steps])  # transcripts are JSON-serialisable


def test_undecodable_image_is_recorded_not_raised():
    bad = ImageInput(data=b"\x89PNG not really")
    out = run_frontend(ProblemInput(text=TEXT, images=(bad,)), level=4, call=None)
    assert out.problem_text == TEXT and out.images == (bad,)
    assert stage_steps(out, "crop")[0]["method"] == "skipped"


def test_unknown_level_or_ocr_mode_is_refused():
    with pytest.raises(ValueError, match="unknown level"):
        run_frontend(ProblemInput(text="x", images=()), level=6, call=None)
    with pytest.raises(ValueError, match="OCR mode"):
        run_frontend(
            ProblemInput(text="x", images=()), level=4, call=None, switches=FrontendSwitches(ocr="gpt")
        )


# --- SVG -----------------------------------------------------------------------------------------


def test_svg_is_extracted_from_chatter_and_sub_superscripts_are_inlined():
    reply = (
        'Here you go:\n```xml\n<svg viewBox="0 0 50 50"><text x="1" y="9">N<tspan baseline-shift="sub">1</tspan>'
        ' = m v<tspan style="baseline-shift: super">2</tspan> R<tspan dy="3">ab</tspan></text></svg>\n```'
    )
    svg = clean_svg(reply)
    assert svg.svg == (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 50"><text x="1" y="9">'
        "N_1 = m v^2 R_{ab}</text></svg>"
    )
    assert svg.inlined_scripts == 3


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("<svg><script>alert(1)</script></svg>", "<script>"),
        ('<svg><image href="https://example.org/a.png"/></svg>', "<image>"),
        ('<svg><use href="http://evil/x.svg#a"/></svg>', "external reference"),
        ('<svg><rect onclick="x()"/></svg>', "event handler"),
        ('<svg><rect style="fill: url(https://x/y)"/></svg>', "external url"),
        ('<svg xmlns:h="http://www.w3.org/1999/xhtml"><h:p>x</h:p></svg>', "foreign element"),
        ("<svg><foreignObject/></svg>", "foreignObject"),
        ('<!DOCTYPE svg [<!ENTITY a "b">]><svg>&a;</svg>', "undefined entity"),
        ('<svg><!ENTITY x "y"><g/></svg>', "DTD"),
        ("<svg><g></svg>", "malformed"),
        ("<svg>a</svg> and <svg>b</svg>", "malformed"),
        ("no figure here", "no <svg>"),
    ],
)
def test_unsafe_or_malformed_svg_is_rejected(reply, reason):
    with pytest.raises(SvgError, match=re.escape(reason)):
        clean_svg(reply)


def test_truncation_keeps_a_well_formed_svg_under_the_cap():
    big = clean_svg(
        '<svg viewBox="0 0 100 100">'
        + "".join(f'<line x1="{i}" y1="0" x2="{i}" y2="100"/>' for i in range(1000))
        + "</svg>"
    ).svg
    out, removed = truncate_svg(big, 2000)
    assert len(out) <= 2000 and removed > 900
    root = ET.fromstring(out)
    assert root[0].get("x1") == "0"  # the start of the figure survives
    assert "truncated" in out
    assert truncate_svg(SVG, 12000) == (SVG, 0)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=30), cap=st.integers(120, 3000))
def test_truncation_is_well_formed_and_within_the_cap(sizes, cap):
    groups = "".join(
        f'<g id="g{i}">' + "".join(f'<circle cx="{j}" cy="{i}" r="1"/>' for j in range(n)) + "</g>"
        for i, n in enumerate(sizes)
    )
    svg = clean_svg(f'<svg viewBox="0 0 50 50">{groups}</svg>').svg
    out, removed = truncate_svg(svg, cap)
    assert len(out) <= cap
    assert _local_tag(ET.fromstring(out)) == "svg"
    assert (removed == 0) == (out == svg)


def _local_tag(element) -> str:
    return element.tag.rpartition("}")[2]


def _many_lines(n: int) -> str:
    return (
        '<svg viewBox="0 0 9 9">'
        + "".join(f'<line x1="{i}" y1="0" x2="1" y2="1"/>' for i in range(n))
        + "</svg>"
    )


def test_over_cap_svg_is_reasked_once_then_accepted(composed):
    call = good_call(
        visual_extract=[json.dumps({"svg": _many_lines(300)}), json.dumps({"svg": _many_lines(5)})]
    )
    out = run_frontend(
        ProblemInput(text=TEXT, images=(composed,)),
        level=3,
        call=call,
        switches=FrontendSwitches(svg_char_cap=1000),
    )
    extracts = stage_steps(out, "visual_extract")
    assert [e["decision"] for e in extracts] == ["rejected", "accepted"]
    assert "over the 1000-character cap" in extracts[0]["reason"]
    second_prompt = [r.user for s, r in call.calls if s == "visual_extract"][1]
    assert "could not be used" in second_prompt
    assert out.svg.count("<line") == 5


def test_over_cap_twice_is_truncated_politely(composed):
    call = good_call(visual_extract=[json.dumps({"svg": _many_lines(300)})])
    out = run_frontend(
        ProblemInput(text=TEXT, images=(composed,)),
        level=3,
        call=call,
        switches=FrontendSwitches(svg_char_cap=1000),
    )
    assert call.stages().count("visual_extract") == 2
    assert stage_steps(out, "visual_extract")[-1]["decision"] == "truncated"
    assert len(out.svg) <= 1000
    ET.fromstring(out.svg)


def test_invalid_svg_twice_is_skipped_and_the_reconstructor_still_runs(composed):
    call = good_call(visual_extract=["<svg><script>x</script></svg>"])
    out = run_frontend(ProblemInput(text=TEXT, images=(composed,)), level=3, call=call)
    assert out.svg is None
    assert [e["decision"] for e in stage_steps(out, "visual_extract")] == ["rejected", "rejected", "skipped"]
    assert "[SVG of the figure]" not in dict(call.calls)["reconstruct"].user
    assert stage_steps(out, "reconstruct")[0]["outcome"] == "accepted"


def test_accepted_svg_is_given_to_the_reconstructor(composed):
    call = good_call()
    out = run_frontend(
        ProblemInput(text=TEXT, images=(composed,), options=(("A", "1 m/s^2"), ("B", "4.9 m/s^2"))),
        level=3,
        call=call,
    )
    prompt = dict(call.calls)["reconstruct"].user
    assert out.svg in prompt and "A. 1 m/s^2" in prompt and "B. 4.9 m/s^2" in prompt


# --- Reconstructor ------------------------------------------------------------------------------


def test_missing_numbers_checks_every_number_of_the_original():
    assert missing_numbers(TEXT, "A 2.5 kg block on a 30 degree ramp") == []
    assert missing_numbers(TEXT, "A 2.5 kg block on a ramp") == ["30"]
    assert missing_numbers("R = 1,5 kΩ and 12 V", "R = 1.5 kΩ and 12 V") == ["1,5"]
    assert missing_numbers("no numbers", "") == []


@pytest.mark.parametrize(
    "reply, outcome, missing",
    [
        (json.dumps({"problem": "A block slides down a ramp inclined at 30 degrees."}), "rejected", ["2.5"]),
        (
            json.dumps({"problem": "A 25 kg block slides down a ramp inclined at 30 degrees."}),
            "rejected",
            ["2.5"],
        ),
        (json.dumps({"problem": "   "}), "rejected", None),
        (json.dumps({"problem": "Sorry, I cannot read the figure."}), "rejected", None),
        ("A block of mass 2.5 kg at 30 degrees", "unparsed", None),
        (result("", OutputStatus.FAILED), "unparsed", None),
    ],
)
def test_reconstruction_failing_validation_keeps_the_original_text(reply, outcome, missing, composed):
    call = good_call(reconstruct=[reply])
    out = run_frontend(ProblemInput(text=TEXT, images=(composed,)), level=2, call=call)
    step = stage_steps(out, "reconstruct")[0]
    assert step["outcome"] == outcome and step["kept_original"] is True
    assert out.problem_text == TEXT
    assert step.get("missing_numbers") == missing


def test_level_2_without_a_figure_skips_the_reconstructor():
    call = good_call()
    out = run_frontend(ProblemInput(text=TEXT, images=()), level=2, call=call)
    assert call.calls == [] and out.problem_text == TEXT
    assert stage_steps(out, "reconstruct")[0]["reason"] == "no figure"


# --- Prompts ------------------------------------------------------------------------------------

PLACEHOLDERS = {
    "<one of: horizontal | vertical>",
    "<one of: top | left>",
    "<number between 0 and 1>",
    "<svg>",
    "<text>",
    "<one of: yes | no>",
    "<one of: up | down | none>",
    "<one of: left | right | none>",
}


def test_every_prompt_ends_with_an_output_format_json_template(composed):
    call = good_call(
        crop_verify=['{"clean": "no", "move": "left", "amount": 0.1}', '{"clean": "yes"}'],
        crop_propose=[json.dumps({"orientation": "vertical", "text_side": "left", "split_fraction": 0.5})],
    )
    run_frontend(ProblemInput(text="", images=(composed,)), level=4, call=call)
    seen = set()
    for stage, request in call.calls:
        head, _, tail = request.user.rpartition("[Output format]\n")
        assert head and "[Output format]" not in head, stage
        template = json.loads(tail)
        assert set(template.values()) <= PLACEHOLDERS, stage
        seen.add(stage)
        assert request.system
    assert seen == {"crop_propose", "crop_verify", "ocr", "visual_extract", "reconstruct"}


# --- Properties ---------------------------------------------------------------------------------


@st.composite
def small_images(draw):
    width, height = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    pixels = np.random.default_rng(seed).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    if draw(st.booleans()):
        pixels[pixels > 100] = 255  # mostly white, like a drawing
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(buffer, format=draw(st.sampled_from(["PNG", "JPEG"])))
    return ImageInput(buffer.getvalue(), media_type="image/png")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(max_size=200),
    images=st.lists(small_images(), max_size=2),
    level=st.sampled_from([1, 2, 3, 4, 5]),
    cropper=st.booleans(),
    sharpen=st.booleans(),
)
def test_run_frontend_never_raises_without_a_model(text, images, level, cropper, sharpen):
    out = run_frontend(
        ProblemInput(text=text, images=tuple(images)),
        level=level,
        call=None,
        switches=FrontendSwitches(cropper=cropper, sharpen=sharpen),
    )
    assert isinstance(out.problem_text, str)
    assert len(out.images) == (0 if level == 1 else len(images))
    json.dumps([step.detail for step in out.steps])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replies=st.lists(
        st.text(max_size=80)
        | st.sampled_from(
            [
                '{"clean": "no", "move": "up"}',
                '{"svg": "<svg/>"}',
                '{"orientation": "vertical", "split_fraction": 0.5}',
            ]
        ),
        min_size=1,
        max_size=6,
    ),
    images=st.lists(small_images(), min_size=1, max_size=1),
)
def test_run_frontend_never_raises_on_arbitrary_model_replies(replies, images):
    call = Scripted(
        **{
            stage: list(replies)
            for stage in ("crop_propose", "crop_verify", "ocr", "visual_extract", "reconstruct")
        }
    )
    out = run_frontend(
        ProblemInput(text="m = 2 kg", images=tuple(images)),
        level=4,
        call=call,
        switches=FrontendSwitches(ocr="model"),
    )
    assert "2" in numbers_in(out.problem_text)  # kept verbatim or preserved by an accepted reconstruction
