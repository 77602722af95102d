"""What every browser test shares: one Chromium launch recipe, a page at a width, signing in,
keeping screenshots for the docs, and the one check every page state must pass
(`assert_fits_and_accessible`). Test modules import the fixtures they ask for by name
(`from tests.browser_support import browser, ...`)."""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = "/usr/bin/chromium"
# A phone, a laptop and a wide screen: every page must fit each with nothing out of reach.
WIDTHS = [390, 1280, 1920]
# The landing page is served on loopback, which a long URL may not name (it would point back at
# the server itself); Chromium resolves this name to it without asking any DNS server.
TARGET_HOST = "landing.test"
LAUNCH_ARGS = [
    f"--host-resolver-rules=MAP {TARGET_HOST} 127.0.0.1",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
TARGET_TITLE = "Spring sale landing page"
# The impacts a page may not have; "moderate" and "minor" ones are advice.
BLOCKING_IMPACTS = ("serious", "critical")

needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"needs Chromium at {CHROMIUM}"
)


class _TargetPage(http.server.BaseHTTPRequestHandler):
    """The marketer's landing page: where the short link must take the browser."""

    def do_GET(self):
        body = f"<!doctype html><title>{TARGET_TITLE}</title><h1>{TARGET_TITLE}</h1>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # keep the test output quiet
        pass


@pytest.fixture
def target_url():
    with served_on_loopback(_TargetPage) as port:
        yield f"http://{TARGET_HOST}:{port}/spring-sale?utm_source=test"


@contextlib.contextmanager
def served_on_loopback(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """`handler` answering on 127.0.0.1 and a free port (another origin than the live server,
    which is localhost), in a thread, until the block ends; yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def launch_chromium(playwright, *, host_rules: tuple[str, ...] = ()):
    """Debian's Chromium, headless, with LAUNCH_ARGS. `host_rules`: more host-resolver rules
    (e.g. `MAP promo.test:80 127.0.0.1:8123`: a short domain whose DNS points at the test
    server), besides the landing page's."""
    args = list(LAUNCH_ARGS)
    if host_rules:
        rules = ", ".join((f"MAP {TARGET_HOST} 127.0.0.1", *host_rules))
        args = [arg for arg in args if not arg.startswith("--host-resolver-rules=")]
        args.append(f"--host-resolver-rules={rules}")
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)


@pytest.fixture(scope="session")
def playwright_session():
    """One Playwright per test process: a test that needs a Chromium of its own (other launch
    arguments) launches it from this one, as a second sync_playwright() in the same thread is
    refused while the first runs."""
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls made by the
    # tests themselves (users, flushing visits) are still plain synchronous calls.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def _chromium(playwright_session):
    # Launched once per test process (about 2 s each here); each test's pages live in contexts
    # of their own (page_at_width), so no cookie or storage passes from one test to the next.
    browser = launch_chromium(playwright_session)
    yield browser
    browser.close()


@pytest.fixture
def browser(_chromium):
    yield _chromium
    for context in _chromium.contexts:  # what a failed test left open
        context.close()


@contextlib.contextmanager
def single_page_app(directory: Path) -> Iterator[str]:
    """A built single-page app (`directory`: its index.html and assets) served on 127.0.0.1 and a
    port of its own, another origin than the live server (localhost); every path that is no file
    there answers its index.html, as the app's client-side routes need. Yields its URL."""

    class Files(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(directory), **kwargs)

        def send_head(self):
            if not os.path.isfile(self.translate_path(self.path)):
                self.path = "/index.html"
            return super().send_head()

        def log_message(self, *args):  # keep the test output quiet
            pass

    with served_on_loopback(Files) as port:
        yield f"http://127.0.0.1:{port}"


def log_in(page, base_url: str, username: str, password: str, path: str = "/accounts/login/"):
    page.goto(base_url + path)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def page_at_width(browser, width: int, height: int = 900):
    """(context, page): a new page `width` px wide, in a context of its own (its own cookies),
    waiting up to 10 s for what it is asked to find."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


def keep_screenshot(artifacts_dir: str, name: str) -> None:
    """With UPDATE_SCREENSHOTS=1, copy a screenshot into docs/screenshots/ (docs/ui.md shows
    them); otherwise a test run leaves the tracked files alone."""
    if os.environ.get("UPDATE_SCREENSHOTS") != "1":
        return
    docs = os.path.join(settings.BASE_DIR, "docs", "screenshots")
    os.makedirs(docs, exist_ok=True)
    shutil.copyfile(os.path.join(artifacts_dir, name), os.path.join(docs, name))


# Every box inside the page that scrolls sideways (table wrappers, the admin's result list) and
# is wider inside than it shows: a column or a button hidden behind a scroll nobody sees.
# `overflow-x: hidden` is left out on purpose: that is a deliberate ellipsis (with a title).
_HIDDEN_BEHIND_SIDEWAYS_SCROLL = """() => {
    const found = [];
    for (const el of document.querySelectorAll('main *, #content *, .table-wrap')) {
        const overflow = getComputedStyle(el).overflowX;
        if (!el.classList.contains('table-wrap') && overflow !== 'auto' && overflow !== 'scroll') {
            continue;
        }
        if (el.scrollWidth > el.clientWidth + 1) {
            const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
                + (el.className && typeof el.className === 'string'
                   ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
            const inner = el.querySelector('table');
            const label = inner && (inner.dataset.testid || inner.dataset.breakdown || inner.id);
            found.push(`${name}${label ? ' (' + label + ')' : ''}: `
                       + `${el.scrollWidth}px inside ${el.clientWidth}px`);
        }
    }
    return found;
}"""


# When the page is too wide: the innermost elements that reach past the window's right edge,
# so the message names what to fix.
_PAST_THE_RIGHT_EDGE = """() => {
    const edge = window.innerWidth;
    const past = [...document.body.querySelectorAll('*')].filter(
        el => el.getBoundingClientRect().right > edge + 1);
    return past.filter(el => !past.some(other => other !== el && el.contains(other)))
        .slice(0, 5)
        .map(el => el.tagName.toLowerCase()
             + (el.className && typeof el.className === 'string'
                ? '.' + el.className.trim().split(/\\s+/).join('.') : '')
             + ` "${(el.textContent || '').trim().slice(0, 40)}"`
             + ` right edge ${Math.round(el.getBoundingClientRect().right)}px`);
}"""


# axe-core's rules read the DOM, not the layout, so one width finds almost everything: a
# feature's states are checked with axe at the laptop width, and every page at all three
# widths by the page walk (tests/test_browser_pages.py), which asks for axe at each. Fitting
# the window is checked at every width everywhere. (Measured on two files' 12 cases, -n 0:
# 61 s with axe at every width, 49 s with it at one.)
AXE_WIDTH = 1280


def assert_fits_and_accessible(page, what: str, *, axe: bool | None = None) -> None:
    """The page fits its window (nothing runs off the side, nothing sits behind a sideways
    scroll inside it) and axe-core finds no violation of serious or critical impact.

    `axe`: None runs it at AXE_WIDTH only; True at any width (the page walk); False only for
    pages that are not ours to fix (the Swagger UI page)."""
    width = page.evaluate("window.innerWidth")
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if scroll_width > width:
        culprits = page.evaluate(_PAST_THE_RIGHT_EDGE)
        raise AssertionError(f"{what}: {scroll_width}px wide in a {width}px window: {culprits}")
    hidden = page.evaluate(_HIDDEN_BEHIND_SIDEWAYS_SCROLL)
    assert not hidden, f"{what} at {width}px, content behind a sideways scroll: {hidden}"
    if axe is False or (axe is None and width != AXE_WIDTH):
        return
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page).response
    serious = [
        f"{rule['id']} ({rule['impact']}): {[node['target'] for node in rule['nodes']][:3]}"
        for rule in results["violations"]
        if rule["impact"] in BLOCKING_IMPACTS
    ]
    assert not serious, f"{what} at {width}px: {serious}"


def chromium_user_agent(browser) -> str:
    # Headless Chromium calls itself "HeadlessChrome"; a person's Chromium on Linux says this.
    return (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        f"Chrome/{browser.version} Safari/537.36"
    )


def deliver_visits() -> None:
    """With Redis the click waits in the buffer for the worker; do the worker's job now."""
    from analytics import services

    services.flush_pending(wait=True)
    services.aggregate_hourly(wait=True)
