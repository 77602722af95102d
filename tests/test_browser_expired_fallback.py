"""A stopped link's fallback in Chromium (issue #28), at a phone's, a laptop's and a wide screen's
width: the create form's options take "Once stopped, send visitors to"; the created page confirms
it; the edit form shows it; once the link is revoked, Chromium following the short link lands on
the fallback page (a 302, not the 410 page); My links says "→ fallback" and the stats page counts
the visit as sent to the fallback. Every page fits its width and passes axe-core.
"""

import os

import pytest

from tests.browser_support import (
    TARGET_TITLE,
    assert_fits_and_accessible,
    chromium_user_agent,
    deliver_visits,
    keep_screenshot,
    log_in,
    needs_chromium,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_a_revoked_link_sends_chromium_to_its_fallback(
    browser, live_server, user, artifacts_dir, target_url, width
):
    """The fallback is the landing page (tests.browser_support.target_url), which Chromium
    reaches by a name the URL policy takes, as a marketer's "offer ended" page would be."""
    from links.models import UrlLink
    from links.services.change import link_revoke

    base = live_server.url
    alias = f"ended-{width}"
    fallback = target_url
    # A person's Chromium (headless calls itself HeadlessChrome, which the stats count as a bot).
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.get_by_text("Options:").click()
    page.get_by_label("Long URL").fill("https://example.com/spring-offer")
    page.get_by_label("Custom alias").fill(alias)
    page.get_by_label("Once stopped, send visitors to").fill(fallback)
    assert_fits_and_accessible(page, "create form with a fallback")
    page.get_by_role("button", name="Shorten").click()
    assert page.get_by_test_id("expired-url").inner_text().strip() == fallback
    assert_fits_and_accessible(page, "created page of a link with a fallback")

    page.goto(base + f"/dashboard/links/{alias}/edit/")
    assert page.get_by_label("Once stopped, send visitors to").input_value() == fallback
    assert_fits_and_accessible(page, "edit form with a fallback")

    link = UrlLink.objects.get(code=alias)
    link_revoke(code=alias, user=link.owner)
    page.goto(base + f"/{alias}")
    page.wait_for_url(fallback)
    assert page.locator("h1").inner_text() == TARGET_TITLE
    deliver_visits()

    page.goto(base + "/dashboard/?status=expired")
    row = page.locator(f"tr[data-code='{alias}']")
    assert row.get_by_test_id("fallback").inner_text().strip() == "→ fallback"
    assert_fits_and_accessible(page, "My links with a link sent to its fallback")

    page.goto(base + f"/dashboard/links/{alias}/")
    assert page.get_by_test_id("sent-to-fallback").inner_text().strip() == "1"
    assert page.get_by_test_id("total-clicks").inner_text().strip() == "1"
    assert_fits_and_accessible(page, "stats page of a link sent to its fallback")
    if width == 1280:
        name = "expired-fallback-stats.png"
        page.screenshot(path=os.path.join(artifacts_dir, name), full_page=True)
        keep_screenshot(artifacts_dir, name)
    context.close()
