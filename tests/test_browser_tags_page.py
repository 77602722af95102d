"""Tags in a real browser (Playwright + Debian's Chromium) at 390, 1280 and 1920 px, with
axe-core: the page listing every tag of the workspace (/dashboard/tags/: empty, then with long
names and clicks; reached from the navigation, leading to a tag's stats and to My links
filtered by it), and the confirmation a rename onto another tag's name asks for before it
merges the two (issue #27)."""

from __future__ import annotations

import os
import re

import pytest

from analytics.tests.factories import add_visits
from links.models import Tag
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

# Nearly as long as a tag may be (50 characters), with a space and a slash.
LONG_TAG = "Spring sale 2026/newsletter-and-social-campaigns"
# One word as long as a tag may be: it must break rather than run off a phone's screen.
LONG_WORD = "x" * 50


def _signed_in_page(browser, base: str, width: int):
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    return context, page


@pytest.mark.parametrize("width", WIDTHS)
def test_the_tags_page_lists_each_tag_with_its_links_and_clicks(
    browser, live_server, user, width, artifacts_dir
):
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Tags").click()
    page.wait_for_url(base + "/dashboard/tags/")
    assert page.get_by_test_id("tags-empty").is_visible()
    assert_fits_and_accessible(page, "tags page, no tags yet")

    busy = link_create(user=user, long_url="https://ex.com/busy", tags=[LONG_TAG, LONG_WORD]).link
    link_create(user=user, long_url="https://ex.com/old", tags=[LONG_TAG], archived=True)
    add_visits(busy, 12)
    add_visits(busy, 3, bot=True)
    page.reload()
    rows = page.locator("[data-testid=tag-list] tbody tr")
    assert rows.count() == 2
    assert page.get_by_role("link", name=LONG_WORD).is_visible()
    row = page.locator("tr", has=page.get_by_role("link", name=LONG_TAG))
    assert row.get_by_test_id("tag-links-count").inner_text() == "2"
    assert row.get_by_test_id("tag-clicks").inner_text() == "12"
    # A table side by side on a laptop or wider, cards on a phone.
    shown_as = row.evaluate("el => getComputedStyle(el).display")
    assert shown_as == ("block" if width < 1024 else "table-row"), shown_as
    assert_fits_and_accessible(page, "tags page")
    page.screenshot(path=os.path.join(artifacts_dir, f"tags-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "tags-1280.png")

    # Its links in My links, the archived one shown too.
    row.get_by_test_id("tag-my-links").click()
    page.wait_for_url(re.compile(r".*/dashboard/\?tag=.*archived=on"))
    assert page.locator("tbody tr").count() == 2
    assert LONG_TAG in page.get_by_test_id("tag-filter").inner_text()
    page.go_back()
    # Its stats, and the way to rename or delete it there.
    row.get_by_test_id("tag-manage-link").click()
    page.wait_for_selector("[data-testid=tag-manage]")
    assert page.get_by_role("heading", name="Rename or delete this tag").is_visible()
    assert page.get_by_test_id("tag-link-count").inner_text() == "2"
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_renaming_onto_another_tag_asks_first_naming_it_and_the_links_then_merges(
    browser, live_server, user, width, artifacts_dir
):
    for number in (1, 2):
        link_create(user=user, long_url=f"https://ex.com/spring-{number}", tags=["spring"])
    link_create(user=user, long_url="https://ex.com/sale", tags=["Sale"])
    base = live_server.url
    context, page = _signed_in_page(browser, base, width)
    page.goto(base + "/dashboard/tags/spring/")
    page.get_by_label("New name").fill("sale")
    page.get_by_role("button", name="Rename").click()

    confirm = page.get_by_test_id("tag-merge-confirm")
    confirm.wait_for()
    text = confirm.inner_text()
    assert "“Sale” is already one of your tags." in text
    assert "Merge “spring” into “Sale”? Its 2 links will carry “Sale” instead" in text
    assert set(Tag.objects.values_list("name", flat=True)) == {"spring", "Sale"}  # not yet
    assert_fits_and_accessible(page, "tag page, merge to confirm")
    page.screenshot(path=os.path.join(artifacts_dir, f"tag-merge-{width}.png"), full_page=True)

    confirm.get_by_role("button", name="Yes, merge into “Sale”").click()
    page.wait_for_url(base + "/dashboard/tags/Sale/")
    message = page.locator(".message").inner_text()
    assert "Merged “spring” into your existing tag “Sale”" in message
    assert "(3 links in all)" in message
    assert page.get_by_test_id("tag-link-count").inner_text() == "3"
    assert list(Tag.objects.values_list("name", flat=True)) == ["Sale"]
    assert_fits_and_accessible(page, "tag page, merged")
    context.close()
