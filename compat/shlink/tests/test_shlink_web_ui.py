"""Shlink's own web UI against this product (issue #27's Done-when): the published
`@shlinkio/shlink-web-component`, mounted with `@shlinkio/shlink-js-sdk`'s API client and fetch
HTTP client in a tiny app (web_ui/ beside this file: its package.json and lock pin every
package), built with Vite and served from another origin (127.0.0.1 and a port of its own)
against the live server (localhost: another origin, so every call goes through CORS for real).

Chromium clicks through every control the dashboard has: the short URL list, its 12 orders (five
columns each way, and visits again with bots left out: nonBotVisits), its filters (visits reached,
enabled in the past, a date interval and a date range), its search and CSV export, tags with modes
any and all, and tags left out (any, then all); creating a short URL with "Enabled since"
(validSince) set, editing it, deleting one; the visits of a short URL, a tag, the default domain
(`DEFAULT`) and another one, orphan and non-orphan visits (each filtered by a domain, then the
default one), deleting a short URL's visits and the orphan visits; the default domain's short URLs
(the list's domain filter, `domain=DEFAULT`); a short URL's redirect rules (four added in the rule
editor, with a device, an IP address, a country and an after-date condition, saved, and read back
with GET), a domain's redirects (edit, save), renaming and deleting a tag. The server answers
Shlink 5.0.0 in its health check, so the UI offers the controls Shlink turns on up to that version
(compat.shlink.views.SHLINK_API_VERSION).
Every call the page makes to the product is recorded; the test fails on any that failed
(status 400 or more, or refused by CORS or the network), except `mercure-info`,
whose 501 is Shlink's own "no Mercure hub" answer (docs/api-shlink.md), and on any step whose
visible outcome did not come; the message lists both, every step being tried whatever an
earlier one did (a screenshot of each such step goes to test-artifacts/).

The app is installed with `npm ci` and built with `npx vite build` in .cache/shlink-web-ui/
(once per lock and source; tests/npm_clients.py); without Node, npm or the registry the test
skips and says why, unless SHLINK_WEB_UI_REQUIRED=1 (CI), which turns that into a failure.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from django.utils import timezone

from accounts.services import api_key_create
from analytics.models import VisitRecord
from analytics.orphans import flush_orphans
from analytics.tests.factories import add_visits
from compat.shlink.tests.test_shlink_list import ORDERS
from links.models import Domain, UrlLink
from links.services.change import link_update
from links.services.create import link_create
from links.services.domains import domain_save
from tests.browser_support import deliver_visits, launch_chromium, needs_chromium, single_page_app
from tests.npm_clients import client_unavailable, npm_client_installed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

APP_SOURCE = Path(__file__).parent / "web_ui"
APP_FILES = (
    "package.json",
    "package-lock.json",
    "vite.config.js",
    "index.html",
    "main.js",
    "app.css",
)
REQUIRED_ENV = "SHLINK_WEB_UI_REQUIRED"
# Vite 8's own floor.
NODE_AT_LEAST = (20, 19)

# Another short domain, whose DNS (Chromium's host rules) points at the live server, as an
# extra domain's would point at the install.
PROMO = "promo.test"
CREATED = "made-in-ui"
CAPPED, EXPIRED, PROMO_CODE = "cap-1", "old-1", "promo-1"
ORPHANS = ("/zz-gone-1", "/zz-gone-2", "/zz-gone-3")
# A short URL's app deep links (#28): an app's own scheme for iOS, an App Link for Android.
APP_IOS = "exampleshop://product/7"
APP_ANDROID = "https://shop.example.com/app/product/7"
RULE_URL = "https://example.com/for-android"
RULE_IP_URL = "https://example.com/for-the-office"
RULE_COUNTRY_URL = "https://example.com/for-germany"
RULE_DATE_URL = "https://example.com/from-2030"
PROMO_HOME = "https://example.com/promo-home"
# The problem type Shlink answers without a Mercure hub.
MERCURE_NOT_CONFIGURED = "https://shlink.io/api/error/mercure-not-configured"


@pytest.fixture(scope="module")
def web_ui() -> Path:
    """The built app: .cache/shlink-web-ui/dist/."""
    if shutil.which("node"):  # without it, npm_client_installed says so
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
        found = node.stdout.strip().lstrip("v").split(".")
        if node.returncode != 0 or tuple(int(part) for part in found[:2]) < NODE_AT_LEAST:
            client_unavailable(
                f"Vite needs Node {'.'.join(map(str, NODE_AT_LEAST))}+, "
                f"found {node.stdout.strip() or node.stderr.strip()}",
                required_env=REQUIRED_ENV,
            )
    installed = npm_client_installed(
        source=APP_SOURCE,
        files=APP_FILES,
        name="shlink-web-ui",
        ready="node_modules/vite/package.json",
        label="Shlink's web component",
        tools=("node", "npm", "npx"),
        required_env=REQUIRED_ENV,
        build=(("npx", "vite", "build"), "dist/index.html"),
    )
    return installed / "dist"


@pytest.fixture
def user(staff_user):
    """The dashboard's key is staff's: orphan visits and domain redirects are staff's business.
    `four` (conftest.py) makes its links for this user."""
    return staff_user


def _get(live_server, path: str) -> int:
    """A visitor's GET on the live server, redirects not followed; its status."""
    parts = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", path, headers={"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"})
        return connection.getresponse().status
    finally:
        connection.close()


def _seed(live_server, user, four) -> dict[str, int]:
    """Besides `four`: a used-up capped link, an expired one, one on the other domain with two
    visits, and three orphan visits (unknown codes asked for). Returns the visit totals the
    pages should show."""
    link_create(user=user, long_url="https://example.com/capped", alias=CAPPED, max_visits=1)
    assert _get(live_server, f"/{CAPPED}") == 302  # its one visit: used up
    expired = link_create(user=user, long_url="https://example.com/over", alias=EXPIRED).link
    UrlLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    domain_save(host=PROMO)
    promo = link_create(
        user=user, long_url="https://example.com/promo", alias=PROMO_CODE, domain=PROMO
    ).link
    add_visits(promo, 2)
    for path in ORPHANS:
        assert _get(live_server, path) == 404
    deliver_visits()
    flush_orphans()
    default_domain = 6 + 3 + 2 + 4 + 1  # A, B, C and D (people and bots), the capped link's
    assert VisitRecord.objects.exclude(link=promo).count() == default_domain
    return {"default": default_domain, "promo": 2, "all": default_domain + 2}


class Journey:
    """The page's calls to the product, the failing ones, and the steps that did not work."""

    def __init__(self, page, *, api: str, others: tuple[str, ...], artifacts: str):
        self.page = page
        self.api = api
        self.artifacts = artifacts
        self.prefixes = (f"{api}/rest/", *others)
        self.made: list[str] = []
        self.failing: list[str] = []
        self.broken: list[str] = []
        page.on("response", self._answered)
        page.on("requestfailed", self._failed)

    def _call(self, request) -> str:
        url = request.url.removeprefix(self.api)
        return f"{request.method} {unquote(url)}"

    def _answered(self, response) -> None:
        request = response.request
        if not request.url.startswith(self.prefixes):
            return
        self.made.append(self._call(request))
        if response.status >= 400:
            try:
                body = response.text()[:300]
            except Exception as error:  # the page moved on before the body was read
                body = f"(body not read: {error})"
            self.failing.append(f"{self._call(request)} → {response.status} {body}")

    def _failed(self, request) -> None:
        # ERR_ABORTED: the page dropped the call itself (a newer list call, or the page left);
        # refused by CORS or unreachable is ERR_FAILED and the like.
        if request.url.startswith(self.prefixes) and "ERR_ABORTED" not in request.failure:
            self.failing.append(f"{self._call(request)} → failed: {request.failure}")

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """A step of the tour; one that does not work is noted and the tour goes on."""
        from playwright.sync_api import Error

        try:
            yield
        except (AssertionError, Error) as error:
            shot = os.path.join(self.artifacts, f"shlink-web-ui-{len(self.broken) + 1}.png")
            self.page.screenshot(path=shot, full_page=True)
            self.broken.append(f"{name}: {str(error).splitlines()[0][:300]} (see {shot})")

    def made_call(self, fragments: str | tuple[str, ...]) -> bool:
        """Whether a call was made with every one of `fragments` in it (method, path, query)."""
        wanted = (fragments,) if isinstance(fragments, str) else fragments
        return any(all(part in call for part in wanted) for call in self.made)


def _codes(page) -> list[str]:
    """The short codes the list shows, top to bottom."""
    return page.eval_on_selector_all(
        "tbody tr td:nth-child(2) a", "links => links.map(a => a.textContent.split('/').pop())"
    )


def _listed(page, expected: list[str], among: set[str], what: str) -> None:
    """Wait (up to 10 s) until the list shows, of the codes in `among`, `expected` in order."""
    deadline = time.monotonic() + 10
    while True:
        seen = [code for code in _codes(page) if code in among]
        if seen == expected:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: the list shows {seen}, expected {expected}")
        page.wait_for_timeout(100)


def _lists(fragment: str):
    """A predicate: the short URL list's call, with `fragment` in its query."""

    def matches(response) -> bool:
        url = unquote(response.url)
        return "/rest/v3/short-urls?" in url and fragment in url

    return matches


def _badge(page, count: int, what: str) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("badge"), what).to_have_text(f"Visits: {count}")


def _row_menu(page, short_url: str, item: str) -> None:
    """Open the list row's menu of `short_url` and pick `item`."""
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=short_url, exact=True))
    row.get_by_role("button", name="Options").click()
    page.get_by_role("menuitem", name=item).click()


def _api_json(api: str, path: str, api_key: str) -> dict:
    """GET on the live server's Shlink API with the dashboard's key: the answer's JSON."""
    parts = urlsplit(api)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", path, headers={"X-Api-Key": api_key})
        response = connection.getresponse()
        assert response.status == 200, (path, response.status)
        return json.loads(response.read())
    finally:
        connection.close()


def _condition(type_: str, value: str) -> dict:
    return {"type": type_, "matchKey": None, "matchValue": value}


def test_shlinks_web_ui_from_another_origin_makes_no_failing_call(
    web_ui, live_server, user, four, settings, artifacts_dir, playwright_session
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, PROMO]
    totals = _seed(live_server, user, four)
    api_key = api_key_create(user=user, name="Shlink's web UI")[1]
    api = live_server.url
    short = {name: f"{api}/{link.code}" for name, link in four.items()}
    codes = {name: link.code for name, link in four.items()}
    among = set(codes.values())

    def in_order(letters: str) -> list[str]:
        return [codes[name] for name in letters]

    from playwright.sync_api import expect

    port = urlsplit(api).port
    with single_page_app(web_ui) as app:
        browser = launch_chromium(
            playwright_session, host_rules=(f"MAP {PROMO}:80 127.0.0.1:{port}",)
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, timezone_id="UTC")
        context.add_init_script(
            f"window.SHLINK_SERVER = {json.dumps({'baseUrl': api, 'apiKey': api_key})};"
        )
        page = context.new_page()
        page.set_default_timeout(10_000)
        journey = Journey(page, api=api, others=(f"http://{PROMO}/",), artifacts=artifacts_dir)

        def open_list(query: str = "") -> None:
            with page.expect_response(_lists("")):
                page.goto(f"{app}/list-short-urls/1{query}")

        with journey.step("the list"):
            open_list()
            assert not page.evaluate("window.origin").startswith(api)
            _listed(page, in_order(ORDERS["dateCreated-DESC"]), among, "newest first")
            assert {CAPPED, EXPIRED, PROMO_CODE} <= set(_codes(page))

        # Each column's header sorts by it: once ascending, again descending.
        headers = {
            "shortCode": page.get_by_role("columnheader", name="Short URL", exact=True),
            "title": page.get_by_role("button", name="Title", exact=True),
            "longUrl": page.get_by_role("button", name="Long URL", exact=True),
            "visits": page.get_by_role("columnheader", name="Visits", exact=True),
            "dateCreated": page.get_by_role("columnheader", name="Created at", exact=True),
        }
        for field, header in headers.items():
            for direction in ("ASC", "DESC"):
                order = f"{field}-{direction}"
                with journey.step(f"sort by {order}"):
                    with page.expect_response(_lists(f"orderBy={order}")):
                        header.click()
                    _listed(page, in_order(ORDERS[order]), among, order)
        # With bots' visits left out, the visits column sorts by people's: nonBotVisits.
        with journey.step("ignore visits from bots"):
            page.get_by_role("button", name="More").click()
            with page.expect_response(_lists("")):
                page.get_by_role("menuitem", name="Ignore visits from bots").click()
            page.keyboard.press("Escape")
        for direction in ("ASC", "DESC"):
            order = f"nonBotVisits-{direction}"
            with journey.step(f"sort by {order}"):
                with page.expect_response(_lists(f"orderBy={order}")):
                    headers["visits"].click()
                _listed(page, in_order(ORDERS[order]), among, order)

        for item, parameter, gone in [
            ("Exclude with visits reached", "excludeMaxVisitsReached=true", CAPPED),
            ("Exclude enabled in the past", "excludePastValidUntil=true", EXPIRED),
        ]:
            with journey.step(item):
                open_list()
                page.get_by_role("button", name="More").click()
                with page.expect_response(_lists(parameter)):
                    page.get_by_role("menuitem", name=item).click()
                _listed(page, in_order("DCBA"), among, item)
                assert gone not in _codes(page), f"{item}: {gone} still listed"

        with journey.step("search"):
            open_list()
            with page.expect_response(_lists("searchTerm=apple")):
                page.get_by_role("searchbox").fill("apple")  # B's long URL
            _listed(page, in_order("B"), among, "searching apple")

        with journey.step("export the list as CSV"):
            open_list()
            with page.expect_download() as download:
                page.get_by_role("button", name="Export").click()
            exported = Path(download.value.path()).read_text()
            assert all(f"{api}/{code}" in exported for code in among), exported[:500]

        with journey.step("the date filter: last 7 days, then until 5 days ago"):
            open_list()
            page.get_by_role("button", name="All short URLs").click()
            with page.expect_response(_lists("startDate=")):
                page.get_by_role("menuitem", name="Last 7 days").click()
            _listed(page, in_order("DCB"), among, "last 7 days")  # A was made 10 days ago
            page.get_by_role("button", name="Last 7 days").click()
            until = (datetime.now(UTC) - timedelta(days=5)).date().isoformat()
            with page.expect_response(_lists("endDate=")):
                page.get_by_label("Until:").fill(until)
            _listed(page, in_order("A"), among, f"until {until}")

        with journey.step("tags sale and red, any then all"):
            open_list()
            page.get_by_role("button", name="With tags...").click()
            search = page.get_by_role("combobox")
            search.fill("sale")
            with page.expect_response(_lists("tags[]=sale")):
                page.get_by_role("option", name="sale", exact=True).click()
            _listed(page, in_order("BA"), among, "tag sale")
            search.fill("red")
            with page.expect_response(_lists("tags[]=red")):
                page.get_by_role("option", name="red", exact=True).click()
            _listed(page, in_order("CBA"), among, "tags sale, red (any)")
            with page.expect_response(_lists("tagsMode=all")):
                page.get_by_role("button", name="All", exact=True).click()
            _listed(page, in_order("A"), among, "tags sale and red (all)")
            with page.expect_response(_lists("tagsMode=any")):
                page.get_by_role("button", name="Any", exact=True).click()
            _listed(page, in_order("CBA"), among, "tags sale or red (any)")

        # Shlink 4.6's "Without tags...": A carries sale and red, B sale, C red, D none.
        with journey.step("tags left out: red, then sale too (any), then both (all)"):
            open_list()
            page.get_by_role("button", name="Without tags...").click()
            search = page.get_by_role("combobox")
            search.fill("red")
            with page.expect_response(_lists("excludeTags[]=red")):
                page.get_by_role("option", name="red", exact=True).click()
            _listed(page, in_order("DB"), among, "without red")
            search.fill("sale")
            with page.expect_response(_lists("excludeTags[]=sale")):
                page.get_by_role("option", name="sale", exact=True).click()
            _listed(page, in_order("D"), among, "without red or sale (any)")
            with page.expect_response(_lists("excludeTagsMode=all")):
                page.get_by_role("button", name="All", exact=True).click()
            _listed(page, in_order("DCB"), among, "without both red and sale (all)")

        since = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=1)
        with journey.step("create a short URL enabled since an hour ago"):
            page.goto(f"{app}/create-short-url")
            page.get_by_placeholder("URL to be shortened").fill("https://example.com/made-in-ui")
            page.get_by_placeholder("Title").fill("Made in the UI")
            page.get_by_placeholder("Custom slug").fill(CREATED)
            page.get_by_label("Enabled since:").fill(since.strftime("%Y-%m-%dT%H:%M"))
            with page.expect_response(
                lambda r: r.url.endswith("/rest/v3/short-urls") and r.request.method == "POST"
            ):
                page.get_by_role("button", name="Save", exact=True).click()
            expect(page.get_by_text("The short URL is")).to_contain_text(f"{api}/{CREATED}")
            open_list()
            assert _codes(page)[0] == CREATED, "the new short URL is not the newest listed"

        with journey.step("edit it"):
            open_list()
            _row_menu(page, f"{api}/{CREATED}", "Edit short URL")
            title = page.get_by_placeholder("Title")
            expect(title).to_have_value("Made in the UI")
            title.fill("Made in the UI, then edited")
            with page.expect_response(lambda r: r.request.method == "PATCH"):
                page.get_by_role("button", name="Save", exact=True).click()
            expect(page.get_by_text("Short URL properly edited.")).to_be_visible()
            open_list()
            expect(page.get_by_role("link", name="Made in the UI, then edited")).to_be_visible()

        # The rule editor offers what the version we answer turns on (4.2: IP address, 4.3:
        # geolocation, 4.5: desktop device types, 5.0: dates): one rule each, saved together.
        with journey.step("redirect rules: device, IP address, country, after a date; save"):
            open_list()
            _row_menu(page, short["B"], "Manage redirect rules")
            expect(page.get_by_text("This short URL has no dynamic redirect rules")).to_be_visible()

            def add_rule(long_url: str, condition_type: str, choose) -> None:
                page.get_by_role("button", name="Add rule").click()
                page.get_by_label("Long URL:").fill(long_url)
                page.get_by_role("button", name="Add condition").click()
                page.get_by_label("Type:", exact=True).select_option(condition_type)
                choose()
                page.get_by_role("button", name="Confirm").click()
                expect(page.get_by_test_id("rule-long-url").last).to_have_text(long_url)

            add_rule(
                RULE_URL,
                "device",
                lambda: page.get_by_label("Device type:").select_option("android"),
            )
            add_rule(
                RULE_IP_URL,
                "ip-address",
                lambda: page.get_by_label("IP address:").fill("203.0.113.0/24"),
            )
            add_rule(
                RULE_COUNTRY_URL,
                "geolocation-country-code",
                lambda: page.get_by_label("Country:").select_option("DE"),
            )
            add_rule(
                RULE_DATE_URL,
                "after-date",
                lambda: page.get_by_label("After:").fill("2030-01-01T09:30"),  # UTC, the page's
            )
            with page.expect_response(
                lambda r: r.url.endswith("/redirect-rules") and r.request.method == "POST"
            ):
                page.get_by_role("button", name="Save rules").click()
            expect(page.get_by_text("Redirect rules properly saved.")).to_be_visible()
            saved = _api_json(api, f"/rest/v3/short-urls/{codes['B']}/redirect-rules", api_key)
            assert [
                (rule["priority"], rule["longUrl"], rule["conditions"])
                for rule in saved["redirectRules"]
            ] == [
                (1, RULE_URL, [_condition("device", "android")]),
                (2, RULE_IP_URL, [_condition("ip-address", "203.0.113.0/24")]),
                (3, RULE_COUNTRY_URL, [_condition("geolocation-country-code", "DE")]),
                (4, RULE_DATE_URL, [_condition("after-date", "2030-01-01T09:30:00+00:00")]),
            ]

        # A short URL's app deep links (#28) in the rule editor: two trailing device rules, which
        # saving posts back unchanged; they stay app links, never becoming rules of ours.
        with journey.step("app links as device rules, saved back unchanged"):
            link_update(code=codes["C"], user=user, ios_url=APP_IOS, android_url=APP_ANDROID)
            open_list()
            _row_menu(page, short["C"], "Manage redirect rules")
            expect(page.get_by_test_id("rule-long-url")).to_have_text([APP_IOS, APP_ANDROID])
            with page.expect_response(
                lambda r: r.url.endswith("/redirect-rules") and r.request.method == "POST"
            ):
                page.get_by_role("button", name="Save rules").click()
            expect(page.get_by_text("Redirect rules properly saved.")).to_be_visible()
            kept = UrlLink.objects.get(code=codes["C"])
            assert (kept.rules, kept.ios_url, kept.android_url) == ([], APP_IOS, APP_ANDROID)
            saved = _api_json(api, f"/rest/v3/short-urls/{codes['C']}/redirect-rules", api_key)
            assert [(rule["longUrl"], rule["conditions"]) for rule in saved["redirectRules"]] == [
                (APP_IOS, [_condition("device", "ios")]),
                (APP_ANDROID, [_condition("device", "android")]),
            ]

        # Shlink 4.3's list filter by domain, from the domains page ("Short URLs").
        with journey.step("the default domain's short URLs"):
            page.goto(f"{app}/manage-domains")
            default = page.get_by_role("row").filter(has_text=urlsplit(api).netloc)
            default.get_by_role("button", name="Options").click()
            with page.expect_response(_lists("domain=DEFAULT")):
                page.get_by_role("menuitem", name="Short URLs").click()
            _listed(page, in_order(ORDERS["dateCreated-DESC"]), among, "the default domain's")
            assert PROMO_CODE not in _codes(page)

        with journey.step("a tag's visits"):
            page.goto(f"{app}/manage-tags")
            sale = page.get_by_role("row").filter(has_text="sale")
            sale.get_by_test_id("visits-amount").click()
            _badge(page, 9, "tag sale: A's 6 and B's 3")  # bots included, as Shlink counts

        with journey.step("the default domain's visits"):
            page.goto(f"{app}/manage-domains")
            default = page.get_by_role("row").filter(has_text=urlsplit(api).netloc)
            default.get_by_role("button", name="Options").click()
            with page.expect_response(lambda r: "/rest/v3/domains/DEFAULT/visits" in r.url):
                page.get_by_role("menuitem", name="Visit stats").click()
            _badge(page, totals["default"], "the default domain")

        with journey.step(f"{PROMO}'s visits"):
            page.goto(f"{app}/manage-domains")
            promo = page.get_by_role("row").filter(has_text=PROMO)
            promo.get_by_role("button", name="Options").click()
            with page.expect_response(lambda r: f"/rest/v3/domains/{PROMO}/visits" in r.url):
                page.get_by_role("menuitem", name="Visit stats").click()
            _badge(page, totals["promo"], PROMO)

        # Shlink 4.6's domain menu on the non-orphan and orphan visits (a tag's has it too; the
        # API tests filter that one, test_shlink_visits.py).
        def visits_of_domain(path: str, domain: str, fragment: str) -> None:
            page.get_by_role("button", name="All domains").click()
            with page.expect_response(
                lambda r: path in r.url and fragment in unquote(r.url) and r.status == 200
            ):
                item = page.get_by_role("menuitem").filter(has_text=domain)
                item.click()

        with journey.step(f"non-orphan visits, then {PROMO}'s, then the default domain's"):
            page.goto(f"{app}/overview")
            page.locator('a[href="/non-orphan-visits"]').click()
            _badge(page, totals["all"], "every short URL's visits")
            visits_of_domain("/rest/v3/visits/non-orphan", PROMO, f"domain={PROMO}")
            _badge(page, totals["promo"], f"{PROMO}'s short URLs' visits")
            page.get_by_role("button", name=f"Domain: {PROMO}").click()
            with page.expect_response(lambda r: "domain=DEFAULT" in r.url):
                page.get_by_role("menuitem").filter(has_text="default").click()
            _badge(page, totals["default"], "the default domain's short URLs' visits")

        with journey.step("a short URL's visits, then delete them"):
            open_list()
            _row_menu(page, short["A"], "Visit stats")
            _badge(page, 6, "A: 1 person and 5 bots")
            page.get_by_role("menuitem", name="Options").click()
            page.get_by_role("button", name="Delete visits").click()
            with page.expect_response(lambda r: r.request.method == "DELETE"):
                page.get_by_role("button", name="Click again to confirm").click()
            _badge(page, 0, "A's visits deleted")
            assert not VisitRecord.objects.filter(link=four["A"]).exists()

        with journey.step("orphan visits, then delete them"):
            page.goto(f"{app}/overview")
            page.locator('a[href="/orphan-visits"]').click()
            _badge(page, len(ORPHANS), "the unknown codes asked for")
            visits_of_domain("/rest/v3/visits/orphan", PROMO, f"domain={PROMO}")
            _badge(page, 0, f"none asked of {PROMO}")
            page.get_by_role("button", name=f"Domain: {PROMO}").click()
            with page.expect_response(lambda r: "domain=DEFAULT" in r.url):
                page.get_by_role("menuitem").filter(has_text="default").click()
            _badge(page, len(ORPHANS), "the unknown codes asked of the default domain")
            page.get_by_role("menuitem", name="Options").click()
            page.get_by_role("button", name="Delete visits").click()
            with page.expect_response(lambda r: r.request.method == "DELETE"):
                page.get_by_role("button", name="Click again to confirm").click()
            _badge(page, 0, "orphan visits deleted")

        with journey.step(f"{PROMO}'s redirects: edit, save"):
            page.goto(f"{app}/manage-domains")
            promo = page.get_by_role("row").filter(has_text=PROMO)
            promo.get_by_role("button", name="Options").click()
            page.get_by_role("menuitem", name="Edit redirects").click()
            page.get_by_label("Base URL").fill(PROMO_HOME)
            with page.expect_response(lambda r: r.request.method == "PATCH"):
                page.get_by_role("button", name="Save", exact=True).click()
            expect(promo).to_contain_text(PROMO_HOME)
            assert Domain.objects.get(host=PROMO).root_redirect == PROMO_HOME

        with journey.step("delete a short URL"):
            open_list()
            _row_menu(page, f"{api}/{EXPIRED}", "Delete short URL")
            page.get_by_placeholder("delete").fill("delete")
            with page.expect_response(lambda r: r.request.method == "DELETE"):
                page.get_by_role("button", name="Delete", exact=True).click()
            expect(page.get_by_role("link", name=f"{api}/{EXPIRED}", exact=True)).to_have_count(0)
            assert UrlLink.objects.get(code=EXPIRED).revoked_at is not None  # our delete revokes

        with journey.step("rename a tag, then delete it"):
            page.goto(f"{app}/manage-tags")
            page.get_by_role("row").filter(has_text="red").get_by_role("button").click()
            page.get_by_role("menuitem", name="Edit").click()
            page.get_by_placeholder("Tag").fill("crimson")
            with page.expect_response(lambda r: r.request.method == "PUT"):
                page.get_by_role("button", name="Save", exact=True).click()
            crimson = page.get_by_role("row").filter(has_text="crimson")
            expect(crimson).to_be_visible()
            crimson.get_by_role("button").click()
            page.get_by_role("menuitem", name="Delete tag").click()
            with page.expect_response(lambda r: r.request.method == "DELETE"):
                page.get_by_role("button", name="Delete tag").click()
            expect(crimson).to_have_count(0)

        browser.close()

    # Every control above made its call (a step that broke before making it says why below).
    expected = [
        *(f"orderBy={order}" for order in ORDERS),
        "excludeMaxVisitsReached=true",
        "excludePastValidUntil=true",
        "tagsMode=any",
        "tagsMode=all",
        "excludeTags[]=red",
        "excludeTagsMode=all",
        "searchTerm=apple",
        "itemsPerPage=20",  # the export's pages
        "domain=DEFAULT",
        f"DELETE /rest/v3/short-urls/{EXPIRED}",
        "PUT /rest/v3/tags",
        "DELETE /rest/v3/tags?tags[]=crimson",
        "POST /rest/v3/short-urls",
        f"PATCH /rest/v3/short-urls/{CREATED}",
        f"GET /rest/v3/short-urls/{codes['B']}/redirect-rules",
        f"POST /rest/v3/short-urls/{codes['B']}/redirect-rules",
        f"POST /rest/v3/short-urls/{codes['C']}/redirect-rules",
        f"GET /rest/v3/short-urls/{codes['A']}/visits",
        f"DELETE /rest/v3/short-urls/{codes['A']}/visits",
        "GET /rest/v3/tags/sale/visits",
        "GET /rest/v3/domains/DEFAULT/visits",
        f"GET /rest/v3/domains/{PROMO}/visits",
        f"GET http://{PROMO}/rest/v3/health",
        "GET /rest/v3/visits/non-orphan",
        ("GET /rest/v3/visits/non-orphan?", f"domain={PROMO}"),
        ("GET /rest/v3/visits/non-orphan?", "domain=DEFAULT"),
        "GET /rest/v3/visits/orphan",
        ("GET /rest/v3/visits/orphan?", f"domain={PROMO}"),
        ("GET /rest/v3/visits/orphan?", "domain=DEFAULT"),
        "DELETE /rest/v3/visits/orphan",
        "PATCH /rest/v3/domains/redirects",
        "GET /rest/v3/mercure-info",
    ]
    not_made = [fragment for fragment in expected if not journey.made_call(fragment)]
    # Shlink's own answer when there is no Mercure hub (docs/api-shlink.md): the dashboard then
    # goes without live updates. Its only failing call allowed.
    failing = [
        call
        for call in journey.failing
        if not (
            call.startswith("GET /rest/v3/mercure-info → 501 ") and MERCURE_NOT_CONFIGURED in call
        )
    ]
    assert not (failing or journey.broken or not_made), "\n".join(
        [
            f"{len(failing)} failing calls:",
            *failing,
            f"{len(journey.broken)} steps that did not work:",
            *journey.broken,
            f"calls never made: {not_made}",
        ]
    )
