"""npm's `yourls-api` (2.1.0, YOURLS's JavaScript client for the browser) works from a page on
another origin in Chromium (issue #27's Done-when): the page, served from 127.0.0.1 on a port
of its own, loads the client's browser build and, against pytest-django's live server
(localhost, another port: another origin), shortens a URL, shortens it again (YOURLS's "already
exists", with the first link), expands the short URL and reads its stats.

Twice: in the client's default way (`format=jsonp` over GET: a <script> per call, with a
callback it names `__yourls<time>_jsonp[<id>]`) and in the way its README recommends for
credentials (`format=json` over POST: an XMLHttpRequest with X-Requested-With, so Chromium
sends a CORS preflight first and reads the answer only with `Access-Control-Allow-Origin`).

The client is installed with `npm ci` from yourls_api_js/package-lock.json (beside this file)
into .cache/yourls-api-js/ (once); without node, npm or the registry the test skips and says why,
unless YOURLS_API_JS_REQUIRED=1 (CI), which turns that into a failure.
"""

from __future__ import annotations

import http.server
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from accounts.services import api_key_create
from analytics.models import HourlyClick
from links.models import UrlLink
from tests.browser_support import (  # noqa: F401 - the fixture
    browser,
    needs_chromium,
    served_on_loopback,
)
from tests.npm_clients import npm_client_installed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

CLIENT_SOURCE = Path(__file__).parent / "yourls_api_js"
CLIENT_FILES = ("package.json", "package-lock.json")
CLIENT_BUILD = "node_modules/yourls-api/dist/yourls.js"
LONG_URL = "https://www.example.com/spring?utm_source=yourls-api"

# The page on the other origin: the client's browser build, as a tool's page would load it.
PAGE = b"""<!doctype html>
<html lang="en"><meta charset="utf-8"><title>A YOURLS tool on another origin</title>
<script src="/yourls.js"></script>
<h1>A YOURLS tool on another origin</h1>
</html>
"""

# Each client call as a promise of [result, response]; a call that never hears back (a JSONP
# script Chromium refused to run, a CORS answer it refused to show) fails after 10 s, naming it.
CALLS = """() => {
    window.yourlsCall = (what, send) => new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(what + ': no answer within 10 s')), 10000);
        send((result, response) => { clearTimeout(timer); resolve([result, response]); });
    });
}"""

SHORTEN_TWICE = """async ({api, signature, options, longUrl}) => {
    yourls.connect(api, {signature}, options);
    const first = await yourlsCall('shorten', done => yourls.shorten(longUrl, done));
    const again = await yourlsCall('shorten again', done => yourls.shorten(longUrl, done));
    return {first, again};
}"""

EXPAND_AND_STATS = """async ({shorturl}) => {
    const expanded = await yourlsCall('expand', done => yourls.url(shorturl).expand(done));
    const stats = await yourlsCall('url stats', done => yourls.url(shorturl).stats(done));
    return {expanded, stats};
}"""


@pytest.fixture(scope="session")
def client_script() -> bytes:
    installed = npm_client_installed(
        source=CLIENT_SOURCE,
        files=CLIENT_FILES,
        name="yourls-api-js",
        ready=CLIENT_BUILD,
        label="npm's yourls-api",
        tools=("npm",),
        required_env="YOURLS_API_JS_REQUIRED",
    )
    return (installed / CLIENT_BUILD).read_bytes()


@pytest.fixture
def tool_page(client_script) -> Iterator[str]:
    """The tool's page on 127.0.0.1 and a port of its own: another origin than the live server
    (localhost); yields its URL."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/yourls.js":
                body, kind = client_script, "application/javascript"
            else:
                body, kind = PAGE, "text/html"
            self.send_response(200)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with served_on_loopback(Page) as port:
        yield f"http://127.0.0.1:{port}/"


@pytest.mark.parametrize(
    "options",
    [None, {"format": "json", "method": "POST"}],
    ids=["jsonp-by-default", "json-post-with-cors"],
)
def test_npm_yourls_api_from_a_page_on_another_origin(
    browser,  # noqa: F811 - the fixture
    live_server,
    tool_page,
    user,
    options,
):
    api = f"{live_server.url}/yourls-api.php"
    signature = api_key_create(user=user, name="yourls-api in the browser")[1]
    page = browser.new_page()
    page.set_default_timeout(20_000)
    calls_to_the_api = []
    page.on(
        "request",
        lambda request: (
            calls_to_the_api.append((request.method, request.resource_type))
            if request.url.startswith(api)
            else None
        ),
    )
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(tool_page)
    assert page.evaluate("typeof yourls") == "object", problems
    assert not page.evaluate("window.origin").startswith(live_server.url)
    page.evaluate(CALLS)

    shortened = page.evaluate(
        SHORTEN_TWICE,
        {"api": api, "signature": signature, "options": options, "longUrl": LONG_URL},
    )

    link = UrlLink.objects.get(owner=user)
    short_url = f"{live_server.url}/{link.code}"
    result, response = shortened["first"]
    assert result["shorturl"] == short_url
    assert result["url"]["keyword"] == link.code
    assert result["url"]["url"] == LONG_URL
    assert response["status"] == "success"
    # YOURLS's unique URLs: the same URL again is "already exists", with the first link.
    result, response = shortened["again"]
    assert response["status"] == "fail"
    assert response["code"] == "error:url"
    assert result["shorturl"] == short_url
    assert result["url"]["keyword"] == link.code
    assert UrlLink.objects.count() == 1

    HourlyClick.objects.create(
        link=link, hour=timezone.now() - timedelta(hours=2), clicks=6, unique_visitors=5
    )
    looked_up = page.evaluate(EXPAND_AND_STATS, {"shorturl": short_url})

    result, response = looked_up["expanded"]
    assert result == {"keyword": link.code, "longurl": LONG_URL, "shorturl": short_url}
    assert response["message"] == "success"
    result, _ = looked_up["stats"]
    assert result["shorturl"] == short_url
    assert result["url"] == LONG_URL
    assert result["clicks"] == "6"
    assert not problems

    if options is None:  # a <script> per call, in the client's own callback
        assert calls_to_the_api == [("GET", "script")] * 4
    else:
        # XMLHttpRequests with X-Requested-With: Chromium sent each only after a preflight it
        # accepted, and showed its answer only with Access-Control-Allow-Origin.
        assert calls_to_the_api == [("POST", "xhr")] * 4
    page.close()
