"""My links' bulk bar in Chromium (issue #28), at a phone's, a laptop's and a wide screen's
width: select all ticks every row, an action applies to the ticked links and the page after it
says how many changed and which were refused and why; a revoke asks first. Every page fits its
width and passes axe-core.
"""

import os
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser_support import (
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_select_all_then_one_action_for_every_ticked_link(
    browser, live_server, user, artifacts_dir, width
):
    from links.models import UrlLink
    from links.tests.factories import UrlLinkFactory
    from links.tests.helpers import tag_names

    links = [UrlLinkFactory(owner=user, alias=f"bulk-{n}") for n in range(3)]
    late = UrlLinkFactory(
        owner=user, alias="starts-late", valid_since=timezone.now() + timedelta(days=60)
    )
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(base + "/dashboard/")

    select_all = page.get_by_label("Select all links on this page")
    select_all.check()
    assert page.locator("input.bulk-pick:checked").count() == 4
    assert page.locator("#bulk-count").inner_text() == "4 selected"
    assert_fits_and_accessible(page, "My links with every row ticked")
    if width == 1280:
        page.screenshot(path=os.path.join(artifacts_dir, "links-bulk-1280.png"), full_page=True)
        keep_screenshot(artifacts_dir, "links-bulk-1280.png")

    page.get_by_label("With the selected links").select_option("add_tags")
    page.get_by_label("Tags", exact=True).fill("spring, <i>promo</i>")
    page.get_by_role("button", name="Change selected").click()
    summary = page.get_by_test_id("bulk-summary")
    assert summary.inner_text().startswith("4 links changed")
    assert tag_names(links[0]) == ["<i>promo</i>", "spring"]
    assert_fits_and_accessible(page, "bulk result")

    page.get_by_role("link", name="Back to My links").click()
    page.get_by_label("Select all links on this page").check()
    in_a_month = timezone.localtime() + timedelta(days=30)
    page.get_by_label("With the selected links").select_option("set_expiry")
    page.get_by_label("Expiry", exact=True).fill(in_a_month.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Change selected").click()
    assert page.get_by_test_id("bulk-summary").inner_text().startswith("3 links changed")
    refused = page.get_by_test_id("bulk-refused")
    assert "starts-late" in refused.inner_text()
    assert_fits_and_accessible(page, "bulk result with a refused link")
    if width == 1280:
        page.screenshot(
            path=os.path.join(artifacts_dir, "links-bulk-done-1280.png"), full_page=True
        )
        keep_screenshot(artifacts_dir, "links-bulk-done-1280.png")
    late.refresh_from_db()
    assert late.expires_at is None

    page.get_by_role("link", name="Back to My links").click()
    page.locator("tr[data-code='bulk-0'] input.bulk-pick").check()
    page.locator("tr[data-code='bulk-1'] input.bulk-pick").check()
    page.get_by_label("With the selected links").select_option("revoke")
    page.get_by_role("button", name="Change selected").click()
    expect(page.get_by_role("button", name="Yes, revoke them")).to_be_visible()
    assert_fits_and_accessible(page, "bulk revoke question")
    assert UrlLink.objects.filter(revoked_at__isnull=False).count() == 0
    page.get_by_role("button", name="Yes, revoke them").click()
    assert page.get_by_test_id("bulk-summary").inner_text().startswith("2 links changed")
    assert UrlLink.objects.filter(revoked_at__isnull=False).count() == 2
    context.close()
