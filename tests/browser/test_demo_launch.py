"""Browser: on a fresh ``load_demo`` database the admin logs in and, by clicks only, launches a debate of the
three demo solvers (simulated models with different skill profiles) over the demo's choice and fill-in
problems, then finds it in the list, completed and scored by script. The probe baseline is not offered."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from models_registry.demo import DEMO_SOLVERS
from solving.models import SolveRun
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot


def test_admin_launches_a_debate_on_a_fresh_demo(page, live_server, role_groups, settings, tmp_path):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.VAR_DIR = tmp_path
    call_command("load_demo", "--count", "0", stdout=StringIO())  # demo logins, models, problems

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill("admin-demo")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")

    menu(page, "Evaluation", "Debate runs")
    page.wait_for_url(f"{live_server.url}/debate/")
    assert page.get_by_role("heading", name="Launch a debate run").is_visible()
    solver_options = page.locator("#id_solver_1 option").all_inner_texts()
    assert not any("baseline-ocr-nearest" in o for o in solver_options)
    for name in DEMO_SOLVERS:
        assert any(o.startswith(name) for o in solver_options)

    page.get_by_label("Name").fill("browser demo debate")
    page.get_by_label("Problem source").select_option(label="PhysAlign debate demo (20 parent problems)")
    for n, name in enumerate(DEMO_SOLVERS, start=1):
        page.locator(f"#id_solver_{n}").select_option(name)
    screenshot(page, "demo-debate-launch")
    page.get_by_role("button", name="Launch debate").click()
    page.wait_for_url(f"{live_server.url}/debate/runs/*/")

    run = SolveRun.objects.get(name="browser demo debate")
    assert run.kind == "debate" and run.total == 20
    assert run.debate.solver_names == list(DEMO_SOLVERS)

    menu(page, "Evaluation", "Debate runs")
    page.wait_for_url(f"{live_server.url}/debate/")
    row = page.locator("table tbody tr", has_text="browser demo debate")
    assert row.count() == 1
    assert " + ".join(DEMO_SOLVERS) in row.inner_text()
    assert "20 / 20" in row.inner_text() and "Completed" in row.inner_text()
    screenshot(page, "demo-debate-listed")
    assert_no_csp_violations(page)
