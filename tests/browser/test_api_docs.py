"""/api/docs/ in a real browser: Swagger UI from our own static files renders every operation, under the
site's CSP (no violation) and without a single request to another host."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from drf_spectacular.generators import SchemaGenerator
from playwright.sync_api import expect

from .conftest import PASSWORD, assert_no_csp_violations, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

METHODS = {"get", "put", "post", "patch", "delete"}


def schema_operations() -> int:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return sum(1 for item in schema["paths"].values() for method in item if method in METHODS)


def test_api_docs_render_every_operation_offline_under_the_csp(page, live_server, make_browser_user):
    make_browser_user("docs_admin", "admin")
    requested: list[str] = []
    failed: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on("requestfailed", lambda request: failed.append(request.url))

    page.goto(f"{live_server.url}/api/docs/")  # anonymous: to the login form, then back
    page.get_by_label("Username").fill("docs_admin")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(re.escape(f"{live_server.url}/api/docs/") + r"$"))

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("PhysAlign Studio API")
    operations = page.locator(".opblock")
    expect(operations.first).to_be_visible()
    expected = schema_operations()
    expect(operations).to_have_count(expected)
    put_pass = page.locator(
        '.opblock-put .opblock-summary-path[data-path="/api/parents/{problem_id}/passes/{pass_no}/"]'
    )
    expect(put_pass).to_have_count(1)
    screenshot(page, "api-docs")

    assert expected > 40
    assert_no_csp_violations(page)
    hosts = {urlsplit(url).netloc for url in requested if not url.startswith(("data:", "blob:"))}
    assert hosts == {urlsplit(live_server.url).netloc}
    assert failed == []
    assert (
        f"{live_server.url}/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in requested
    )
    assert f"{live_server.url}/api/schema/" in requested
