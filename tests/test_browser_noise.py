"""Issue #14's wording and noise on the stats page, in a real browser (Playwright + Debian's
Chromium) at 390, 1280 and 1920 px: a new link shows one "No data yet" message instead of a
card per table; the latest visits are people's, with a link to show bots and link previews too
(named, their kind as a badge) and back; tables that know nothing are named in one line and
networks that no data names are a muted note, not an "Unknown 100%" card; a revoked link says
when it was revoked. Each state fits its width and axe-core finds nothing serious or critical.
Screenshots go to test-artifacts/; UPDATE_SCREENSHOTS=1 also refreshes docs/screenshots/.
"""

import os
import re

import pytest

from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def _shot(page, artifacts_dir: str, name: str, width: int) -> None:
    page.screenshot(path=os.path.join(artifacts_dir, f"{name}-{width}.png"), full_page=True)
    if width == 1280:  # the docs show the laptop width
        keep_screenshot(artifacts_dir, f"{name}-{width}.png")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_stats_page_says_what_matters_once(
    browser,
    live_server,
    user,
    artifacts_dir,
    width,
):
    from analytics.tests.factories import add_visits
    from links.services.change import link_revoke
    from links.services.create import link_create

    base = live_server.url
    link = link_create(user=user, long_url="https://example.com/launch", alias="launch").link
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    stats = f"{base}/dashboard/links/{link.code}/"

    # A new link: one message for all the tables, no bot toggle.
    page.goto(stats)
    assert page.get_by_test_id("no-breakdowns").inner_text().startswith("No data yet")
    assert page.get_by_text("No data in this period").count() == 0
    assert page.locator("[data-breakdown]").count() == 0
    assert page.get_by_test_id("bots-toggle").count() == 0
    assert_fits_and_accessible(page, "stats of a new link")
    _shot(page, artifacts_dir, "stats-new-link", width)

    # People and bots; a region and a network the data does not name.
    add_visits(link, 3, isp="", province="", referrer="https://news.example.org/story")
    add_visits(link, 2, bot=True)
    add_visits(link, is_bot=True, device_type="Bot", bot_name="Slackbot", bot_kind="social")
    page.goto(stats + "?range=30d")
    latest = page.get_by_test_id("latest-visits")
    assert page.get_by_role("heading", name="Latest visits by people").is_visible()
    assert latest.locator("tbody tr").count() == 3
    assert "bot" not in latest.inner_text().lower()
    assert page.locator("[data-breakdown=isps]").count() == 0  # no "Unknown 100%" card
    assert page.get_by_test_id("networks-note").is_visible()
    unknown = page.get_by_test_id("unknown-breakdowns")
    assert unknown.inner_text() == "Not known for any click in this period: Provinces / regions."
    assert page.locator("[data-breakdown=provinces]").count() == 0
    assert page.locator("[data-breakdown=bots]").is_visible()
    assert_fits_and_accessible(page, "stats with people and bots")
    _shot(page, artifacts_dir, "stats-people-first", width)

    # Bots and link previews on request, named, the kind a badge; the period kept; and back.
    page.get_by_role("link", name="Show bots and link previews too").click()
    page.wait_for_url(re.compile(r"range=30d&bots=1#latest-heading$"))
    assert latest.locator("tbody tr").count() == 6
    device = latest.locator("tr.bot-row td[data-label=Device]")
    assert device.first.locator(".badge").count() == 1
    texts = device.all_inner_texts()
    assert "Slackbot Social preview" in texts and "Googlebot Search engine" in texts
    assert not any(re.search(r"\bbot bot\b", text, re.I) for text in texts)
    assert_fits_and_accessible(page, "stats with bots shown")
    page.get_by_role("link", name="Show people only").click()
    page.wait_for_url(re.compile(r"range=30d#latest-heading$"))
    assert latest.locator("tbody tr").count() == 3

    # Revoked: says when, not "expires <past time>".
    link_revoke(code=link.code, user=user)
    page.goto(stats)
    dates = page.get_by_test_id("link-dates").inner_text()
    assert re.fullmatch(r"Created; revoked \d{4}-\d\d-\d\d \d\d:\d\d", dates), dates
    assert_fits_and_accessible(page, "stats of a revoked link")
    context.close()
