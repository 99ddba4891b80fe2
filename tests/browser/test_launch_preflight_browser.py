"""Browser (issue 28 item 10): an admin logs in, opens the evaluation launch form by the menu, picks the OCR
baseline while this machine has no tesseract, sees the preview say the launch will be refused, presses Launch
and reads the refusal with its reason; nothing is created. With tesseract back, the same clicks launch the run."""

from __future__ import annotations

import pytesseract.pytesseract as tess

from evaluation.models import EvalRequest, EvalRun
from models_registry.demo import demo_models_ensure
from tests.browser.conftest import PASSWORD, assert_no_csp_violations, menu, screenshot
from tests.evaluation.conftest import compile_and_approve

OCR = "baseline-ocr-nearest"
MISSING = "/nonexistent/bin/tesseract"


def _pick_ocr_and_launch(page) -> None:
    page.get_by_label("Name").fill("ocr baseline run")
    page.get_by_label(f"{OCR} ({OCR}:tesseract-nearest-region)").check()
    page.get_by_role("button", name="Launch").click()


def test_a_launch_whose_model_lacks_tesseract_is_refused_with_the_reason(
    page, live_server, make_browser_user, django_user_model, monkeypatch
):
    make_browser_user("boss", "admin")
    compile_and_approve(django_user_model)
    demo_models_ensure()
    monkeypatch.setattr(tess, "tesseract_cmd", MISSING)  # the live server runs in this process

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    menu(page, "Evaluation", "Evaluation runs")
    page.wait_for_url(f"{live_server.url}/runs/")

    page.get_by_label(f"{OCR} ({OCR}:tesseract-nearest-region)").check()
    warning = page.get_by_test_id("preview-unavailable")
    warning.wait_for()
    assert "This launch will be refused:" in warning.inner_text()
    page.get_by_label(f"{OCR} ({OCR}:tesseract-nearest-region)").uncheck()
    warning.wait_for(state="detached")

    _pick_ocr_and_launch(page)
    page.wait_for_url(f"{live_server.url}/runs/")
    alert = page.get_by_role("alert")
    reason = (
        f"Model {OCR} (OCR baseline) needs the tesseract binary, which is not installed on this machine "
        f"('{MISSING}' is not found; apt-get install tesseract-ocr). Nothing was launched."
    )
    assert alert.inner_text() == reason
    screenshot(page, "launch-refused-no-tesseract")
    assert not EvalRun.objects.exists() and not EvalRequest.objects.exists()

    monkeypatch.undo()  # tesseract is back
    page.get_by_label(f"{OCR} ({OCR}:tesseract-nearest-region)").uncheck()
    _pick_ocr_and_launch(page)
    page.wait_for_url(f"{live_server.url}/runs/*/")
    run = EvalRun.objects.get()
    assert run.name == "ocr baseline run" and run.total > 0
    assert_no_csp_violations(page)
