"""Every page the product serves, in every state a person meets it, at a phone's, a laptop's and
a wide screen's width (issue #14): nothing runs off the side, no column or action sits behind a
sideways scroll, and axe-core finds no violation of serious or critical impact (the Swagger
page must only fit: it is not ours).

The data is what a busy marketer has: 25 links, some with 200-character URLs and titles, one
with visits from phones, tablets, computers and bots in several countries with referrers, one
revoked. Each page state is saved in test-artifacts/ at each width (page-<state>-<width>.png);
the ones docs/ui.md shows are also saved under their docs name (UPDATE_SCREENSHOTS=1:
docs/screenshots/). One test per width walks every page and reports every page that fails,
not just the first.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from urllib.parse import quote, urlencode

import pytest
from django.utils import timezone

from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)
from webhooks.models import Webhook, WebhookDelivery

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

# A URL of exactly 200 characters with no space to break at, and a title as long as one may be.
LONG_URL = (
    "https://shop.example.com/campaigns/2026/spring-sale/landing-pages/"
    "newsletter-subscribers-only-offer-with-free-shipping-on-every-order"
    "?utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale-2026&ref=x"
)
LONG_URL = (LONG_URL + "x" * 200)[:200]
LONG_TITLE = ("Spring sale for newsletter subscribers: free shipping on every order " * 3)[:200]
# A tag with a space and a slash, nearly as long as a tag may be (50 characters).
TAG = "Spring sale 2026/newsletter-and-social-campaigns"
# The screenshots docs/ui.md shows: (page state, width) -> (file name, whole page or the top).
DOCS_SCREENSHOTS = {
    ("created link", 390): ("created-link-phone.png", False),
    ("my links", 1280): ("my-links.png", True),
    ("my links", 390): ("my-links-phone.png", False),
    ("stats with visits", 1280): ("link-stats.png", True),
    ("tag stats with visits", 1280): ("tag-stats.png", True),
    ("staff overview", 1280): ("overview.png", True),
    ("admin link list", 1280): ("admin-links.png", True),
    ("admin link list", 390): ("admin-links-phone.png", False),
}
# Visitors of the busy link: (count, fields) of people and bots from several places and devices.
VISITORS = [
    (12, {"country": "Germany", "city": "Berlin", "device_type": "PC"}),
    (
        8,
        {
            "country": "France",
            "country_code": "FR",
            "province": "Île-de-France",
            "city": "Paris",
            "browser_type": "Mobile Safari",
            "os_type": "iOS",
            "device_type": "Mobile",
            "referrer": "https://www.instagram.com/p/" + "a" * 120,
        },
    ),
    (
        5,
        {
            "country": "United States",
            "country_code": "US",
            "province": "California",
            "city": "San Francisco",
            "browser_type": "Firefox",
            "os_type": "Windows",
            "device_type": "Tablet",
            "referrer": "https://news.ycombinator.com/item?id=1",
            "isp": "Comcast Cable Communications, LLC",
        },
    ),
    (3, {"bot": True, "referrer": ""}),
    (
        2,
        {
            "is_bot": True,
            "device_type": "Bot",
            "browser_type": "Slackbot-LinkExpanding",
            "bot_name": "Slackbot",
            "bot_kind": "social",
        },
    ),
]


@pytest.fixture
def busy_marketer(user):
    """The marketer's 25 links (every third one long), the busy one with visits, one revoked;
    the busy one and two others tagged TAG, one of those with visits too."""
    from analytics.tests.factories import add_visits
    from links.services.tags import link_tags_set
    from links.tests.factories import UrlLinkFactory

    now = timezone.now()
    made = []
    for i in range(22):
        long = i % 3 == 0
        made.append(
            UrlLinkFactory(
                owner=user,
                long_url=f"{LONG_URL[:190]}&n={i:04d}" if long else f"https://example.com/page/{i}",
                title=LONG_TITLE if long else f"Campaign page {i}",
                expires_at=now + dt.timedelta(days=30) if i % 4 == 0 else None,
            )
        )
    busy = UrlLinkFactory(owner=user, alias="spring-sale", long_url=LONG_URL, title=LONG_TITLE)
    for hours_ago, (count, fields) in enumerate(VISITORS):
        add_visits(busy, count, when=now - dt.timedelta(hours=hours_ago * 5), **fields)
    for link in (busy, made[0], made[1]):
        link_tags_set(link=link, tags=[TAG])
    add_visits(made[1], 4, when=now - dt.timedelta(days=2), **VISITORS[1][1])
    new = UrlLinkFactory(owner=user, alias="brand-new", long_url="https://example.com/new")
    revoked = UrlLinkFactory(owner=user, alias="old-offer", revoked=True)
    return {"busy": busy, "new": new, "revoked": revoked}


class Walk:
    """Opens page states one after another and keeps every problem found, so one run names
    every page that does not fit or fails axe-core."""

    def __init__(self, page, base: str, width: int, artifacts_dir: str):
        self.page, self.base, self.width, self.artifacts_dir = page, base, width, artifacts_dir
        self.problems: list[str] = []
        self.seen: list[str] = []

    def open(self, path: str, status: int = 200):
        response = self.page.goto(self.base + path)
        assert response.status == status, f"{path}: {response.status}, expected {status}"
        return response

    def check(self, what: str, *, axe: bool = True) -> None:
        self.seen.append(what)
        try:
            assert_fits_and_accessible(self.page, what, axe=axe)
            if axe:  # every page of ours has its one main landmark (the 500 page had none)
                mains = self.page.locator("main").count()
                assert mains == 1, f"{what} at {self.width}px: {mains} <main> elements"
        except AssertionError as problem:
            self.problems.append(str(problem))
        slug = re.sub(r"\W+", "-", what).strip("-")
        self.page.screenshot(
            path=os.path.join(self.artifacts_dir, f"page-{slug}-{self.width}.png"), full_page=True
        )
        if (what, self.width) in DOCS_SCREENSHOTS:
            name, full_page = DOCS_SCREENSHOTS[what, self.width]
            self.page.screenshot(path=os.path.join(self.artifacts_dir, name), full_page=full_page)
            keep_screenshot(self.artifacts_dir, name)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_and_passes_axe(
    browser, live_server, busy_marketer, staff_user, width, artifacts_dir, settings
):
    settings.ROOT_URLCONF = "tests.urls_with_faults"  # adds a bug and an outage to show
    settings.AXES_FAILURE_LIMIT = 2
    base = live_server.url
    busy, new, revoked = busy_marketer["busy"], busy_marketer["new"], busy_marketer["revoked"]

    # Signed out.
    context, page = page_at_width(browser, width)
    walk = Walk(page, base, width, artifacts_dir)
    walk.open("/")
    walk.check("home, signed out")
    walk.open("/accounts/login/")
    walk.check("login")
    log_in(page, base, "marketer", "not-the-password")
    page.get_by_text("did not match").wait_for()
    walk.check("login, wrong password")
    walk.open(f"/{revoked.code}", status=410)
    walk.check("short link gone (410)")
    walk.open("/nothing-here", status=404)
    walk.check("short link not found (404)")
    walk.open("/test-faults/bug/", status=500)
    assert "Something went wrong" in page.content()
    walk.check("server error (500)")
    walk.open("/test-faults/outage/", status=503)
    walk.check("database outage (503)")
    for _ in range(2):
        log_in(page, base, "someone-else", "wrong")
    page.get_by_text("Too many failed sign-ins").wait_for()
    walk.check("locked out")
    context.close()

    # The marketer.
    context, page = page_at_width(browser, width)
    walk.page = page
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    walk.check("home, signed in")
    page.get_by_label("Long URL").fill(LONG_URL.replace("shop.", "store."))
    page.get_by_text("Options: alias, title, start and expiry").click()
    page.get_by_label("Title", exact=True).fill(LONG_TITLE)
    walk.check("create form with options")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    walk.check("created link")
    # The short URL may wrap before its code on a phone, never inside it.
    code_part = page.locator("#short-url .code-part")
    assert len(code_part.evaluate("el => [...el.getClientRects()]")) == 1
    assert code_part.evaluate("el => el.scrollWidth <= el.clientWidth"), "the code is cut"
    walk.open("/dashboard/")
    walk.check("my links")
    # A table with every column side by side on a laptop or wider, cards on a phone; a long
    # URL is cut to one line with the whole of it in its title.
    row = page.locator(f"tr[data-code='{busy.code}']")
    shown_as = row.evaluate("el => getComputedStyle(el).display")
    assert shown_as == ("block" if width < 1024 else "table-row"), shown_as
    assert row.locator("td.fill .truncate").get_attribute("title") == LONG_URL
    for action in ("Stats", "Copy", "QR", "Edit", "Revoke"):
        assert row.get_by_text(action, exact=True).is_visible()
    walk.open("/dashboard/?page=2")
    walk.check("my links, page 2")
    walk.open("/dashboard/?q=newsletter&order=clicks")
    walk.check("my links, searched")
    walk.open("/dashboard/?q=no-such-thing")
    walk.check("my links, nothing matches")
    walk.open(f"/dashboard/links/{busy.code}/")
    walk.check("stats with visits")
    walk.open(f"/dashboard/links/{busy.code}/?range=30d&rows=all")
    walk.check("stats, 30 days, every row")
    walk.open(f"/dashboard/links/{new.code}/")
    walk.check("stats of a new link")
    walk.open(f"/dashboard/links/{revoked.code}/")
    walk.check("stats of a revoked link")
    walk.open(f"/dashboard/?{urlencode({'tag': TAG})}")
    walk.check("my links, filtered by a tag")
    page.get_by_test_id("tag-stats-link").click()
    page.wait_for_selector("[data-testid=tag-links]")
    walk.check("tag stats with visits")
    walk.open(f"/dashboard/tags/{quote(TAG)}/?range=30d&rows=all")
    assert page.get_by_test_id("total-clicks").inner_text() == "29"  # 25 + 4 people's clicks
    walk.check("tag stats, 30 days, every row")
    walk.open("/dashboard/tags/")
    walk.check("tags")
    walk.open(f"/dashboard/links/{busy.code}/edit/")
    walk.check("edit")
    walk.open(f"/dashboard/links/{busy.code}/revoke/")
    walk.check("revoke, asking first")
    walk.open("/accounts/api-keys/")
    walk.check("API keys")
    # A webhook with a long URL and a log: one delivered, one failing with a long answer.
    webhook = Webhook.objects.create(
        owner=busy.owner,
        workspace=busy.workspace,
        url="https://93.184.215.14/hooks/" + "shorturl-events/" * 8,
        events=["link.created", "link.clicked"],
    )
    for status, answer in ((200, "ok"), (500, "Internal Server Error " * 40)):
        WebhookDelivery.objects.create(
            webhook=webhook,
            event="link.created",
            payload={},
            attempts=1,
            status="succeeded" if status == 200 else "pending",
            response_status=status,
            response_excerpt=answer[:500],
            next_attempt_at=None if status == 200 else timezone.now(),
        )
    walk.open("/dashboard/webhooks/")
    walk.check("webhooks")
    # Workspaces (#16): one the marketer owns with a long name and members, and one where
    # they only read.
    from links.tests.factories import UrlLinkFactory, UserFactory
    from workspaces.services import member_add, workspace_create

    team = workspace_create(user=busy.owner, name="Marketing team " + "Spring campaigns " * 3)
    for name, role in (("viewer-" + "v" * 40, "viewer"), ("eddie", "editor")):
        UserFactory(username=name)
        member_add(by=busy.owner, workspace=team, username=name, role=role)
    UrlLinkFactory(owner=busy.owner, workspace=team, long_url="https://team.example.com/spring")
    reader_of = workspace_create(user=staff_user, name="Staff picks")
    member_add(by=staff_user, workspace=reader_of, username="marketer", role="viewer")
    from workspaces.invitations import invitation_create

    partners = workspace_create(user=staff_user, name="Partner links " + "for the autumn " * 3)
    invitation_create(by=staff_user, workspace=partners, address="marketer", role="editor")
    walk.open("/workspaces/")  # with an invitation to answer
    walk.check("workspaces")
    page.get_by_label("Name", exact=True).fill("Another team")
    page.get_by_label("Slug", exact=True).fill("marketer")  # the marketer's personal one's
    page.get_by_role("button", name="Make workspace").click()
    page.wait_for_selector(".errorlist")
    walk.check("workspaces, a refused name")
    walk.open(f"/workspaces/{team.slug}/")
    walk.check("workspace, as its owner")
    page.get_by_label("Username or email").fill("nobody-here@example.com")
    page.get_by_role("button", name="Send invitation").click()
    page.wait_for_selector("[data-testid=invitation-list]")
    walk.check("workspace, an invitation waiting")
    # The header's switcher: labelled, and it changes what My links lists.
    switcher = page.get_by_test_id("workspace-switcher")
    assert switcher.is_visible()
    page.get_by_label("Workspace", exact=True).select_option(team.slug)
    switcher.get_by_role("button", name="Switch").click()
    page.wait_for_url(f"{base}/workspaces/{team.slug}/")
    walk.open("/dashboard/")
    assert page.locator("tbody tr").count() == 1
    walk.check("my links of a team workspace")
    page.get_by_label("Workspace", exact=True).select_option(reader_of.slug)
    with page.expect_navigation():
        page.get_by_test_id("workspace-switcher").get_by_role("button", name="Switch").click()
    assert page.url == f"{base}/dashboard/"
    walk.check("my links, as a viewer")
    walk.open("/")
    assert page.get_by_test_id("viewer-notice").is_visible()
    walk.check("new link, as a viewer")
    walk.open(f"/workspaces/{reader_of.slug}/")
    walk.check("workspace, as a viewer")
    page.get_by_label("Workspace", exact=True).select_option("marketer")
    page.get_by_test_id("workspace-switcher").get_by_role("button", name="Switch").click()
    page.wait_for_url(f"{base}/workspaces/{reader_of.slug}/")  # back where it was done
    assert page.get_by_label("Workspace", exact=True).input_value() == "marketer"
    walk.open("/accounts/preferences/")
    walk.check("preferences")
    walk.open("/accounts/password/")
    walk.check("password change")
    page.get_by_label("Old password").fill("s3cret-pass-1")
    page.get_by_label("New password", exact=True).fill("an0ther-s3cret-pass")
    page.get_by_label("New password confirmation").fill("an0ther-s3cret-pass")
    page.get_by_role("button", name="Change password").click()
    page.wait_for_url(base + "/accounts/password/done/")
    walk.check("password changed")
    walk.open("/dashboard/links/not-mine/", status=404)
    walk.check("page not found (404)")
    walk.open("/dashboard/overview/", status=403)
    walk.check("staff only (403)")
    walk.open("/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .opblock")
    walk.check("API docs (Swagger UI)", axe=False)
    context.close()

    # Staff.
    context, page = page_at_width(browser, width)
    walk.page = page
    log_in(page, base, "staffer", "s3cret-pass-3", path="/admin/login/")
    page.wait_for_url(base + "/admin/")
    walk.check("admin index")
    walk.open("/dashboard/overview/")
    walk.check("staff overview")
    walk.open("/admin/links/urllink/")
    walk.check("admin link list")
    walk.open(f"/admin/links/urllink/{busy.pk}/change/")
    walk.check("admin link page")
    walk.open("/admin/links/uniquecode/")
    walk.check("admin code pool")
    walk.open("/admin/analytics/visitrecord/")
    walk.check("admin visit list")
    first_visit = busy.visits.order_by("pk").first()
    walk.open(f"/admin/analytics/visitrecord/{first_visit.pk}/change/")
    walk.check("admin visit page")
    walk.open("/admin/analytics/hourlyclick/")
    walk.check("admin hourly clicks")
    walk.open("/admin/accounts/apikey/")
    walk.check("admin API keys")
    walk.open("/admin/workspaces/workspace/")
    walk.check("admin workspaces")
    walk.open(f"/admin/workspaces/workspace/{team.pk}/change/")
    walk.check("admin workspace page")
    context.close()

    assert not walk.problems, f"{len(walk.problems)} of {len(walk.seen)} page states:\n" + (
        "\n".join(walk.problems)
    )
