"""Issue #15's tags, UTM builder and archived links in a real browser (Playwright + Debian's
Chromium) at 390, 1280 and 1920 px: the UTM preview follows what is typed, tags are suggested
from the user's own, My links filters by a tag's chip and shows archived links on request."""

import os

import pytest

from links.services.create import link_create
from tests.browser_support import (
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
def test_utm_preview_updates_live_and_tags_are_suggested(
    browser, live_server, user, width, artifacts_dir
):
    link_create(user=user, long_url="https://shop.example.com/old", tags=["Spring", "newsletter"])
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)
    page.goto(base + "/")
    page.get_by_label("Long URL").fill("shop.example.com/sale?ref=a#top")
    page.get_by_text("Advanced: tags, UTM builder").click()
    preview = page.locator("#utm-preview")
    assert not preview.is_visible()  # nothing to preview before a UTM value is typed
    page.get_by_label("Source (utm_source)").fill("news")
    assert preview.inner_text() == "https://shop.example.com/sale?ref=a&utm_source=news#top"
    page.get_by_label("Campaign (utm_campaign)").fill("spring sale")
    assert preview.inner_text() == (
        "https://shop.example.com/sale?ref=a&utm_source=news&utm_campaign=spring%20sale#top"
    )
    # Autocomplete from the user's tags, for the tag after the last comma too.
    tags = page.get_by_label("Tags")
    assert tags.get_attribute("list") == "tag-suggestions"
    tags.fill("Spring, ")
    tags.dispatch_event("input")
    options = page.locator("#tag-suggestions option").evaluate_all(
        "options => options.map(o => o.value)"
    )
    assert options == ["Spring, newsletter"]
    assert_fits_and_accessible(page, "create form, advanced section open")
    page.screenshot(
        path=os.path.join(artifacts_dir, f"create-advanced-{width}.png"), full_page=True
    )
    if width == 1280:
        keep_screenshot(artifacts_dir, "create-advanced-1280.png")

    tags.fill("Spring, summer")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    created = page.get_by_test_id("created-link").inner_text()
    assert "utm_source=news&utm_campaign=spring%20sale#top" in created
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_my_links_filters_by_tag_and_shows_archived_on_request(
    browser, live_server, user, width, artifacts_dir
):
    link_create(user=user, long_url="https://ex.com/spring", tags=["Spring"], title="Spring")
    link_create(user=user, long_url="https://ex.com/plain", title="Plain")
    link_create(user=user, long_url="https://ex.com/gone", title="Old promo", archived=True)
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)
    page.goto(base + "/dashboard/")
    rows = page.locator("tbody tr")
    assert rows.count() == 2  # the archived link is hidden
    assert_fits_and_accessible(page, "My links with tags")

    page.locator("a.chip", has_text="Spring").click()
    page.wait_for_url("**/dashboard/?tag=Spring")
    assert rows.count() == 1 and "Spring" in page.get_by_test_id("tag-filter").inner_text()
    page.get_by_role("link", name="all tags").click()

    page.get_by_label("Show archived").check()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**archived=on**")
    assert rows.count() == 3
    archived_row = page.locator("tbody tr", has_text="Old promo")
    assert "Archived" in archived_row.inner_text()
    assert_fits_and_accessible(page, "My links, archived shown")
    page.screenshot(path=os.path.join(artifacts_dir, f"links-archived-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "links-archived-1280.png")

    archived_row.get_by_role("button", name="Unarchive").click()
    page.wait_for_selector(".message")
    page.goto(base + "/dashboard/")
    assert rows.count() == 3
    context.close()
