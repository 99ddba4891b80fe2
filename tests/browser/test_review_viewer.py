"""Browser: images reviewers can read and values that render (issue 15 items 8, 9 and one link of item 2).

A probe reviewer claims a parent, opens an attachment in the zoomable viewer with the keyboard (the bytes the
model receives, at their natural size), zooms, pans, leaves with Esc and gets focus back on the thumbnail;
after answering every probe blind, the reveal page shows the parent's original images in the same viewer.
An admin sees debate answers such as ``4\\,\\mathrm{N}`` typeset, not as TeX source."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from annotation.models import ProblemImage
from probes.models import Probe, RenderedView
from probes.services import compile_run_create, compile_run_execute
from solving.management.commands.load_debate_demo import debate_demo_load
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login
from tests.probes.conftest import make_demo_parent

IMG = "document.getElementById('image-viewer-img')"


def viewer_shot(page, name: str) -> None:
    """A screenshot of the window as the reviewer sees it (a full-page shot would stretch the modal viewer)."""
    folder = Path(os.environ.get("PHYSALIGN_SHOTS_DIR") or tempfile.mkdtemp(prefix="physalign-shots-"))
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))


def _viewer_img_box(page) -> dict:
    return page.locator("#image-viewer-img").bounding_box()


def _wait_viewer_image(page) -> None:
    wait_for_js(page, f"{IMG} && !{IMG}.hidden && {IMG}.complete && {IMG}.naturalWidth > 0")


def _answer_blind_here(page) -> None:
    page.wait_for_selector("#blind-form")
    probe = Probe.objects.select_related("key").get(logical_probe_id=page.url.rstrip("/").split("/")[-1])
    page.fill("#binding", ", ".join(probe.key.gold_aliases))
    for read in probe.key.key["read_targets"]:
        page.fill(f"#read_{read['anchor_alias']}", read["expected"])
    page.click("#submit-blind")
    page.wait_for_selector("#slot-probes, #decision-form")


def _focused_href(page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.getAttribute('href')")


def test_a_reviewer_reads_an_attachment_in_the_zoomable_viewer(
    page, live_server, make_browser_user, django_user_model
):
    make_browser_user("vera", "probe_reviewer")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)

    login(page, live_server, "vera", "/review/")
    page.get_by_role("button", name="Primary (1 waiting)").first.click()
    page.wait_for_selector("#slot-probes")
    page.get_by_role("link", name="Next blind answer").click()
    page.wait_for_selector("#blind-form")
    page.wait_for_load_state("load")
    probe = Probe.objects.get(logical_probe_id=page.url.rstrip("/").split("/")[-1])
    first = probe.attachment_ids[0]
    view = RenderedView.objects.get(probe=probe, view_id=first)

    # Keyboard: the thumbnail is a link (focusable, in the tab order); Enter opens it.
    thumb = page.get_by_role("link", name=f"Open attachment {first} in the zoomable viewer")
    href = thumb.get_attribute("href")
    thumb.focus()
    assert _focused_href(page) == href
    page.keyboard.press("Enter")
    dialog = page.get_by_role(
        "dialog", name=re.compile(rf"^Attachment {first} \(1 of {len(probe.attachment_ids)}\)")
    )
    dialog.wait_for()
    assert dialog.get_attribute("aria-modal") == "true"
    _wait_viewer_image(page)
    # the full-resolution bytes (not the 384 px thumbnail copy): the stored view's own size
    assert page.evaluate(f"[{IMG}.naturalWidth, {IMG}.naturalHeight]") == [view.width, view.height]
    assert page.locator("#image-viewer-size").inner_text() == f"{view.width} × {view.height} px"
    assert _focused_href(page) is None  # focus moved into the dialog

    page.keyboard.type("1")  # actual size: one image pixel per CSS pixel
    assert page.locator("#image-viewer-zoom").inner_text() == "100%"
    assert _viewer_img_box(page)["width"] == pytest.approx(view.width, abs=0.5)
    page.keyboard.type("+")
    page.keyboard.type("+")
    assert page.locator("#image-viewer-zoom").inner_text() == "156%"
    zoomed = _viewer_img_box(page)
    assert zoomed["width"] == pytest.approx(view.width * 1.5625, abs=1)
    page.get_by_role("button", name="Zoom in").click()
    assert page.locator("#image-viewer-zoom").inner_text() == "195%"
    assert _viewer_img_box(page)["width"] == pytest.approx(view.width * 1.953125, abs=1)
    for _ in range(5):
        page.keyboard.type("+")
    assert page.locator("#image-viewer-zoom").inner_text() == "596%"  # larger than the window: it pans
    # pan with the arrow keys, then by dragging
    before = _viewer_img_box(page)
    page.keyboard.press("ArrowRight")
    assert _viewer_img_box(page)["x"] == pytest.approx(before["x"] - 40, abs=1)
    stage = page.locator("#image-viewer-stage").bounding_box()
    cx, cy = stage["x"] + stage["width"] / 2, stage["y"] + stage["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 60, cy + 30, steps=4)
    page.mouse.up()
    dragged = _viewer_img_box(page)
    assert dragged["x"] == pytest.approx(before["x"] - 40 + 60, abs=1)
    viewer_shot(page, "review-viewer-zoomed")
    # the wheel zooms out around the pointer; 0 fits the image to the window
    page.mouse.wheel(0, 120)
    assert _viewer_img_box(page)["width"] < dragged["width"]
    page.keyboard.type("-")
    page.keyboard.type("0")
    fitted = _viewer_img_box(page)
    assert fitted["width"] <= stage["width"] + 1 and fitted["height"] <= stage["height"] + 1
    assert max(fitted["width"] - stage["width"], fitted["height"] - stage["height"]) == pytest.approx(
        0, abs=1
    )

    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert _focused_href(page) == href  # focus back on the thumbnail that opened it

    page.keyboard.press(" ")  # Space on the focused thumbnail opens it too
    dialog.wait_for()
    page.keyboard.press("PageDown")  # the next attachment, in the model's order
    second = probe.attachment_ids[1]
    page.get_by_role("dialog", name=re.compile(rf"^Attachment {second} \(2 of")).wait_for()
    page.get_by_role("button", name="Close the viewer").click()
    dialog.wait_for(state="hidden")
    page.wait_for_timeout(500)  # past the frames in which the browser may restore focus to the opener
    assert _focused_href(page) == page.get_by_role(
        "link", name=f"Open attachment {second} in the zoomable viewer"
    ).get_attribute("href")
    assert not page.locator(
        "#parent-originals"
    ).count()  # the blind page shows nothing beyond the public input

    # Answer every probe blind (strict order); the reveal page then shows the parent's original images.
    _answer_blind_here(page)
    while page.get_by_role("link", name="Next blind answer").count():
        page.get_by_role("link", name="Next blind answer").click()
        _answer_blind_here(page)
    if not page.locator("#decision-form").count():
        page.get_by_role("link", name="Next target").click()
    page.wait_for_selector("#decision-form")
    screenshot(page, "review-target-originals")
    original = ProblemImage.objects.get(parent__problem_id="SYNTHETIC_TEST_ONLY", image_id="img_0")
    page.get_by_role("link", name="Open original image img_0 in the zoomable viewer").focus()
    page.keyboard.press("Enter")
    page.get_by_role("dialog", name=re.compile(r"^Original image img_0 of SYNTHETIC_TEST_ONLY")).wait_for()
    _wait_viewer_image(page)
    assert page.evaluate(f"[{IMG}.naturalWidth, {IMG}.naturalHeight]") == [original.width, original.height]
    page.keyboard.type("+")
    viewer_shot(page, "review-viewer-original-zoomed")
    page.keyboard.press("Escape")
    assert (
        page.get_by_role("link", name="The problem page").get_attribute("href")
        == "/problems/SYNTHETIC_TEST_ONLY/"
    )
    assert_no_csp_violations(page)


def test_debate_answers_render_as_math(page, live_server, make_browser_user, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("boss", "admin")
    result = debate_demo_load(count=6, launch=True)

    login(page, live_server, "boss", "/debate/")
    page.get_by_role("link", name=re.compile(rf"^#{result.debate_run_id}\b")).click()
    page.wait_for_selector("#debate-responses")
    answers = page.locator("#debate-responses td[data-tex-auto]")
    tex = [a for a in answers.all() if "\\," in (a.get_attribute("title") or "")]
    assert tex, "the demo has quantity answers such as 4\\,\\mathrm{N}"
    assert all(a.locator(".katex").count() == 1 for a in tex)
    assert "\\," not in page.locator("#debate-responses").inner_text()
    assert "\\mathrm" not in page.locator("#debate-responses").inner_text()
    plain = [a for a in answers.all() if a.inner_text().strip() in {"A", "B", "C", "D"}]
    assert plain and all(a.locator(".katex").count() == 0 for a in plain)  # a choice letter stays as written
    screenshot(page, "debate-run-answers-tex")

    tex[0].locator("xpath=..").get_by_role("link", name="transcript").click()
    page.wait_for_selector("section.transcript-round")
    final = page.get_by_test_id("final-answer")
    assert final.locator(".katex").count() == 1
    assert "\\," not in final.inner_text()
    assert page.locator("tr[data-stage=solve] .katex").count() >= 3  # each solver's canonical form
    assert (
        "\\mathrm" not in page.locator("section.transcript-round").first.inner_text()
    )  # outputs stay folded
    screenshot(page, "debate-transcript-tex")
    assert_no_csp_violations(page)
