"""Browser tests: Debian's Chromium driven by Playwright (sync API) against pytest-django's live_server.

Only the system Chromium is used (``/usr/bin/chromium``); Playwright's own browser downloads are never
fetched. When the binary is absent the session installs it with apt (we run as root) and fails loudly
if that does not work: a missing browser must not turn into silently skipped tests.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission
from PIL import Image, ImageDraw

from physalign_site.roles import ALL_ROLES

# The live server thread and Playwright's sync API share the test thread's event-loop detection.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Screenshots go to a temporary folder made on first use (PHYSALIGN_SHOTS_DIR names one to keep and look at).
_shots_dir: Path | None = None
PASSWORD = "correct-horse-battery-9"

# Runs before any page script: records CSP violations the page could otherwise swallow.
CSP_RECORDER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber + ' ' + e.sample);
});
"""


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    if not CHROMIUM.exists():
        apt = shutil.which("apt-get")
        if apt is None:
            pytest.fail("/usr/bin/chromium is missing and apt-get is not available to install it.")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in ([apt, "update"], [apt, "install", "-y", "chromium"]):
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
            if result.returncode != 0:
                pytest.fail(
                    f"Installing Chromium failed at `{' '.join(command)}`:\n{result.stdout[-2000:]}\n"
                    f"{result.stderr[-2000:]}"
                )
        if not CHROMIUM.exists():
            pytest.fail("apt-get installed 'chromium' but /usr/bin/chromium is still missing.")
    return str(CHROMIUM)


@pytest.fixture(scope="session")
def browser(chromium_executable):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@dataclass
class PageProblems:
    """Console errors, uncaught page errors and CSP violations seen while a test ran."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    allowed: tuple[str, ...] = ()

    def unexpected(self) -> list[str]:
        return [
            msg
            for msg in self.console_errors + self.page_errors
            if not any(fragment in msg for fragment in self.allowed)
        ]


@pytest.fixture
def page_problems() -> PageProblems:
    return PageProblems()


@pytest.fixture
def page(browser, page_problems) -> Iterator:
    context = browser.new_context(viewport={"width": 1360, "height": 900}, locale="en-US")
    context.add_init_script(CSP_RECORDER)
    page = context.new_page()
    page.set_default_timeout(
        30_000
    )  # generous: a loaded 2-core CI machine is slow, a real failure still fails
    page.on(
        "console", lambda msg: page_problems.console_errors.append(msg.text) if msg.type == "error" else None
    )
    page.on("pageerror", lambda exc: page_problems.page_errors.append(str(exc)))
    yield page
    context.close()
    assert page_problems.unexpected() == [], "console errors or CSP violations in the browser"


def assert_no_csp_violations(page) -> None:
    assert page.evaluate("window.__cspViolations") == []


def wait_for_js(page, expression: str, *, timeout_s: float = 30.0) -> None:
    """Poll a JS expression until it is truthy. Unlike ``page.wait_for_function`` (which compiles the
    string inside the page and so trips our CSP's ban on eval), ``page.evaluate`` goes through the
    DevTools protocol, which the page's CSP does not govern."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for: {expression}")
        page.wait_for_timeout(100)


def menu(page, group: str, item: str) -> None:
    """Open a main-menu group and click one of its items, as a user would (clicks only)."""
    nav = page.get_by_role("navigation", name="Main")
    nav.locator("summary", has_text=group).click()
    nav.get_by_role("link", name=item, exact=True).click()


# headers whose text is cut, and table wrappers that scroll sideways, among what is on screen (table ids, '?')
CUT_HEADERS = """() => [...document.querySelectorAll('table thead th')]
    .filter(th => th.offsetParent !== null && th.scrollWidth > th.clientWidth)
    .map(th => (th.closest('table').id || '?') + ': ' + th.textContent.trim())"""
SCROLLING_TABLES = """() => [...document.querySelectorAll('.table-wrap')]
    .filter(w => w.offsetParent !== null && w.scrollWidth > w.clientWidth)
    .map(w => (w.querySelector('table') || {}).id || '?')"""


def screenshot(page, name: str, element=None) -> None:
    """The whole page, or only ``element`` (a locator) when given, as ``<name>.png`` in the shots folder."""
    global _shots_dir
    if _shots_dir is None:
        _shots_dir = Path(
            os.environ.get("PHYSALIGN_SHOTS_DIR") or tempfile.mkdtemp(prefix="physalign-shots-")
        )
        _shots_dir.mkdir(parents=True, exist_ok=True)
    path = str(_shots_dir / f"{name}.png")
    if element is not None:
        element.screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=True)


@pytest.fixture
def role_groups(transactional_db) -> None:
    # Transactional tests flush the database between tests; the role groups come from a data migration.
    for name in ALL_ROLES:
        Group.objects.get_or_create(name=name)


@pytest.fixture
def make_browser_user(role_groups, django_user_model):
    def make(username: str, *roles: str, key_holder: bool = False):
        user = django_user_model.objects.create_user(username=username, password=PASSWORD)
        user.groups.add(*Group.objects.filter(name__in=roles))
        if key_holder:  # the admin role plus probes.view_private_mapping: may know targets
            user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
        return user

    return make


def incline_diagram(width: int = 480, height: int = 300, angle_label: str = "30°") -> bytes:
    """A small physics diagram (block on an incline) so screenshots look like real content."""
    img = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    base_y = height - 40
    draw.line([(40, base_y), (width - 40, base_y)], fill=(0, 0, 0), width=3)
    draw.line([(40, base_y), (width - 40, 70)], fill=(0, 0, 0), width=3)
    draw.line([(width - 40, 70), (width - 40, base_y)], fill=(0, 0, 0), width=3)
    block = [(width // 2 - 30, 150), (width // 2 + 20, 125), (width // 2 + 40, 165), (width // 2 - 10, 190)]
    draw.polygon(block, outline=(0, 0, 0), fill=(210, 210, 210))
    draw.text((width // 2 - 5, 150), "A", fill=(0, 0, 0))
    draw.arc([(0, base_y - 40), (80, base_y + 40)], start=-30, end=0, fill=(0, 0, 0), width=2)
    draw.text((88, base_y - 22), angle_label, fill=(0, 0, 0))
    draw.line([(width // 2 + 5, 160), (width // 2 + 5, 240)], fill=(31, 95, 191), width=3)
    draw.polygon([(width // 2 - 2, 232), (width // 2 + 12, 232), (width // 2 + 5, 246)], fill=(31, 95, 191))
    draw.text((width // 2 + 14, 225), "mg", fill=(31, 95, 191))
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return buffer.getvalue()
