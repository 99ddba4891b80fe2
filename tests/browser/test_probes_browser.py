"""Browser (lives in tests/browser/ so it shares the session's single Playwright instance): launch a compile run from the page, follow its progress, open a probe as a model sees it."""

from __future__ import annotations

from django.contrib.auth.models import Permission

from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login
from tests.probes import kit_demo as demo
from tests.probes.conftest import make_demo_parent


def test_compile_run_and_probe_browser(page, live_server, make_browser_user, django_user_model, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    boss = make_browser_user("boss", "admin")
    boss.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    make_demo_parent(django_user_model)
    login(page, live_server, "boss", "/compile/")
    page.get_by_role("button", name="Start compile run").click()
    page.wait_for_selector("text=Blocked groups by code")
    assert "probes" in page.content()
    screenshot(page, "h5-compile-run")
    page.goto(f"{live_server.url}/probes/?interface=T03-image")
    page.get_by_role("link", name="PAQ-4747b5ff5250").click()
    page.wait_for_selector("#user-message")
    assert page.locator("#gold-aliases").inner_text() == "E2"
    images = page.locator(".attachments img")
    assert images.count() == 4
    wait_for_js(
        page,
        "Array.from(document.querySelectorAll('.attachments img')).every(i => i.complete && i.naturalWidth > 0)",
    )
    assert "Copy the visible text at R1 exactly as written." in page.locator("#user-message").inner_text()
    assert_no_csp_violations(page)
    screenshot(page, "h5-probe-detail")
    assert demo.T03_IMAGE in page.url
