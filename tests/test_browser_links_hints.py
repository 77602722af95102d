"""Issue #14 in a real browser (Playwright + Debian's Chromium) at 390, 1280 and 1920 px: the
short link passes the visitor's query string on, `/<alias>/` works, and creating a link speaks
plainly: redirect types in words, "not a web address", a warning for an alias that differs from
another only by case, a free alias named when one is taken, no past expiry on a revoked link."""

import os
import re

import pytest

from links.tests.factories import UrlLinkFactory
from tests.browser_support import (
    TARGET_TITLE,
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def _signed_in_page(browser, base: str, width: int):
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    return context, page


@pytest.mark.parametrize("width", WIDTHS)
def test_the_short_link_passes_the_query_string_on_with_or_without_a_slash(
    browser,
    live_server,
    target_url,
    user,
    width,
    artifacts_dir,
):
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)
    page.get_by_label("Long URL").fill(target_url)  # …/spring-sale?utm_source=test
    page.get_by_text("Options: alias, title, start and expiry, redirect type").click()
    page.get_by_label("Custom alias").fill("spring-sale")
    # Plain words for the redirect types; query pass-through offered and on by default.
    assert page.get_by_label("Temporary (302, default)", exact=False).is_checked()
    assert page.get_by_label("Pass the query string on").is_checked()
    assert_fits_and_accessible(page, "create form, options open")
    page.screenshot(path=os.path.join(artifacts_dir, f"create-options-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "create-options-1280.png")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    assert "Temporary (302, default)" in page.get_by_test_id("created-link").inner_text()

    # The visitor's own parameters go on; the link's utm_source wins over the visitor's.
    page.goto(f"{base}/spring-sale/?utm_source=visitor&utm_campaign=april")
    assert page.title() == TARGET_TITLE
    assert "utm_source=test" in page.url and "utm_campaign=april" in page.url
    assert "utm_source=visitor" not in page.url
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_creating_a_link_speaks_plainly(
    browser,
    live_server,
    user,
    other_user,
    width,
    artifacts_dir,
):
    UrlLinkFactory(owner=other_user, alias="summer")
    UrlLinkFactory(owner=user, alias="spring-sale")
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)

    # Not a web address.
    page.get_by_label("Long URL").fill("not a url")
    page.get_by_role("button", name="Shorten").click()
    page.get_by_text("is not a web address").wait_for()
    assert "Only http and https" not in page.content()

    # A taken alias: a free one is named beside the field.
    page.get_by_label("Long URL").fill("https://example.com/summer")
    page.get_by_text("Options: alias, title, start and expiry, redirect type").click()
    page.get_by_label("Custom alias").fill("summer")
    page.get_by_role("button", name="Shorten").click()
    page.get_by_text("“summer-2” is free").wait_for()
    assert_fits_and_accessible(page, "create form, alias taken")
    page.screenshot(path=os.path.join(artifacts_dir, f"alias-taken-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "alias-taken-1280.png")

    # An alias differing from one of the marketer's only by case: made, with a warning.
    page.get_by_label("Long URL").fill("https://example.com/spring")
    if not page.get_by_label("Custom alias").is_visible():
        page.get_by_text("Options: alias, title, start and expiry, redirect type").click()
    page.get_by_label("Custom alias").fill("Spring-Sale")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    page.get_by_text("only by upper and lower case").wait_for()
    assert_fits_and_accessible(page, "created link with a case warning")

    # A revoked link: no "expires <past time>" in the list.
    page.goto(f"{base}/dashboard/links/Spring-Sale/revoke/")
    page.get_by_role("button", name=re.compile("Revoke", re.I)).click()
    page.wait_for_url(base + "/dashboard/")
    row = page.locator("tr[data-code='Spring-Sale']")
    assert row.locator("td[data-label=Expires]").inner_text().strip() == "—"
    context.close()
