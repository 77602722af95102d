"""Issue #15's gates in a real browser (Playwright + Debian's Chromium) at 390, 1280 and 1920 px:
a marketer sets a password and a visit limit in the create form's options, and a visitor meets
the unlock page, types a wrong password (told so, on the same page), then the right one, and
lands on the destination. The form's new fields and the unlock page fit and pass axe-core.
Screenshots go to test-artifacts/ (UPDATE_SCREENSHOTS=1: docs/screenshots/)."""

import os

import pytest

from links.models import UrlLink
from links.services.gates import visits_left
from tests.browser_support import (
    TARGET_TITLE,
    WIDTHS,
    assert_fits_and_accessible,
    chromium_user_agent,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

PASSWORD = "open sesame"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_visitor_unlocks_a_password_link_after_a_wrong_try(
    browser, live_server, target_url, user, width, artifacts_dir
):
    base = live_server.url

    # The marketer: the password and the visit limit sit in the create form's options.
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.get_by_label("Long URL").fill(target_url)
    page.get_by_text("Options: alias, title, start and expiry").click()
    password_field = page.get_by_label("Password", exact=True)
    limit_field = page.get_by_label("Visit limit")
    assert password_field.get_attribute("type") == "password"
    password_field.fill(PASSWORD)
    limit_field.fill("5")
    assert_fits_and_accessible(page, "create form with a password and a visit limit")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    short_url = page.locator("#short-url").inner_text().strip()
    context.close()
    link = UrlLink.objects.get(code=short_url.rsplit("/", 1)[1])
    assert (bool(link.password_hash), link.max_visits) == (True, 5)
    assert PASSWORD not in link.password_hash

    # A visitor (no session), with a person's Chromium (headless Chromium says it is a bot,
    # and bots use up no visit): the unlock page, not the destination.
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    response = page.goto(short_url)
    assert response.status == 200
    page.get_by_test_id("unlock").wait_for()
    assert page.title() != TARGET_TITLE
    assert_fits_and_accessible(page, "unlock page")
    # The code is never cut in two (people retype it): one line box for the <code>.
    assert page.locator("main code").first.evaluate("el => el.getClientRects().length") == 1
    page.screenshot(path=os.path.join(artifacts_dir, f"unlock-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, f"unlock-{width}.png")

    # A wrong password: said so beside the field, on the same page, nothing typed kept.
    page.get_by_label("Password").fill("open sesame?")
    page.get_by_role("button", name="Open the link").click()
    page.get_by_text("That password is not right").wait_for()
    assert page.get_by_label("Password").input_value() == ""
    assert page.title() != TARGET_TITLE
    assert_fits_and_accessible(page, "unlock page after a wrong password")

    # The right one: the browser lands on the destination.
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Open the link").click()
    page.wait_for_url(target_url)
    assert page.title() == TARGET_TITLE
    context.close()

    assert visits_left(link) == 4, "one click went through: one of the 5 visits is used"
