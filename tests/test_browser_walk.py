"""Issue #27's walk through the pages in a real browser (Playwright + Debian's Chromium):

- a link whose visit cap a visitor's Chromium used up reads "Visit limit reached", never
  "Active", on its stats page and in My links, whose *Stopped* filter lists it (and *Active*
  does not), at a phone's and a laptop's width;
- a visitor who follows a password-protected link from another site and unlocks it is counted
  as coming from that site, not from the unlock page the form was POSTed from.
"""

from __future__ import annotations

import pytest

from analytics.models import VisitRecord
from links.services.create import link_create
from tests.browser_support import (
    TARGET_TITLE,
    assert_fits_and_accessible,
    chromium_user_agent,
    deliver_visits,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

PASSWORD = "open sesame"
LIMIT_REACHED = "Visit limit reached"
# A news site that links to the short URL, served by the browser itself (page.route): no DNS.
NEWS_PAGE = "http://news.example.test/spring?issue=4"


def _visitor(browser, width: int = 1280):
    """A person's Chromium (headless Chromium says it is a bot, and bots use up no visit)."""
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


@pytest.mark.parametrize("width", [390, 1280])
def test_a_used_up_cap_is_stopped_on_the_stats_page_and_in_my_links(
    browser, live_server, target_url, user, width
):
    base = live_server.url
    capped = link_create(user=user, long_url=target_url, max_visits=1, title="Spring offer").link
    working = link_create(user=user, long_url=target_url + "&open=1", max_visits=5).link

    context, visitor = _visitor(browser, width)
    visitor.goto(f"{base}/{capped.code}")
    assert visitor.title() == TARGET_TITLE
    used_up = visitor.goto(f"{base}/{capped.code}")
    assert used_up.status == 410
    assert "reached its limit" in visitor.content()
    context.close()

    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.goto(f"{base}/dashboard/links/{capped.code}/")
    badge = page.get_by_role("heading", level=1).locator(".badge")
    assert badge.inner_text().strip() == LIMIT_REACHED
    assert_fits_and_accessible(page, "stats of a link whose visits are used up")

    page.goto(f"{base}/dashboard/")
    row = page.locator(f"tr[data-code='{capped.code}']")
    assert row.locator("td[data-label=Status]").inner_text().strip() == LIMIT_REACHED
    other = page.locator(f"tr[data-code='{working.code}']")
    assert other.locator("td[data-label=Status]").inner_text().strip() == "Active"

    # The Stopped filter, chosen as a marketer does: it lists the link; Active does not.
    page.get_by_label("Show", exact=True).select_option("expired")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=expired**")
    assert page.locator(f"tr[data-code='{capped.code}']").is_visible()
    assert page.locator(f"tr[data-code='{working.code}']").count() == 0
    assert_fits_and_accessible(page, "My links, stopped ones")
    page.get_by_label("Show", exact=True).select_option("active")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=active**")
    assert page.locator(f"tr[data-code='{working.code}']").is_visible()
    assert page.locator(f"tr[data-code='{capped.code}']").count() == 0
    context.close()


def test_an_unlocked_visit_is_counted_from_the_site_the_visitor_came_from(
    browser, live_server, target_url, user
):
    base = live_server.url
    link = link_create(user=user, long_url=target_url, password=PASSWORD).link
    short_url = f"{base}/{link.code}"

    context, page = _visitor(browser)
    # The news site asks browsers to send its whole address along (as many sites do).
    news = (
        '<!doctype html><html lang="en"><head><meta name="referrer" content="unsafe-url">'
        f"<title>News</title></head><body><a href='{short_url}'>Spring sale</a></body></html>"
    )
    page.route(
        "http://news.example.test/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=news),
    )
    page.goto(NEWS_PAGE)
    page.get_by_role("link", name="Spring sale").click()
    page.get_by_test_id("unlock").wait_for()
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Open the link").click()
    page.wait_for_url(target_url)
    assert page.title() == TARGET_TITLE
    context.close()

    deliver_visits()
    referrers = list(VisitRecord.objects.filter(link=link).values_list("referrer", flat=True))
    assert referrers == [NEWS_PAGE], "the unlock page's own address was kept as the referrer"
