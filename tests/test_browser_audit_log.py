"""The audit log page in a real browser (Playwright + Debian's Chromium) at 390, 1280 and
1920 px, with axe-core: reached from the workspace's page by its owner, its entries with long
values fitting the screen, filtered by action and by object, and its CSV download (issue #30)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from links.services.change import link_update
from links.services.create import link_create
from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)
from workspaces.selectors import personal_workspace_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

LONG_URL = "https://example.com/" + "campaign/" * 20 + "?utm_source=newsletter-and-social"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_owner_reads_and_filters_the_log(browser, live_server, user, width, artifacts_dir):
    base = live_server.url
    link = link_create(user=user, long_url="https://example.com/a", title="Spring").link
    link_update(code=link.code, user=user, long_url=LONG_URL, title="Spring sale", tags=["q"])
    other = link_create(user=user, long_url="https://example.com/b").link
    workspace = personal_workspace_of(user)

    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(f"{base}/workspaces/{workspace.slug}/")
    page.get_by_role("link", name="Audit log").click()
    page.wait_for_url(f"{base}/workspaces/{workspace.slug}/audit/")
    rows = page.locator("[data-testid=audit-log] tbody tr")
    expect(rows).to_have_count(3)
    assert page.get_by_role("heading", name="Audit log").is_visible()
    update = page.locator("tr[data-action='link.update']")
    expect(update).to_contain_text("Spring sale")
    expect(update).to_contain_text("Spring")
    assert_fits_and_accessible(page, "audit log page")
    page.screenshot(path=os.path.join(artifacts_dir, f"audit-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "audit-1280.png")

    page.get_by_label("Action").select_option("link.create")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"{base}/workspaces/{workspace.slug}/audit/?*")
    expect(rows).to_have_count(2)
    page.get_by_label("Object").fill(other.code)
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(other.code)
    assert_fits_and_accessible(page, "audit log page, filtered")

    with page.expect_download() as download_info:
        page.get_by_test_id("audit-csv").click()
    download = download_info.value
    text = Path(download.path()).read_text(encoding="utf-8")
    assert download.suggested_filename == f"audit-{workspace.slug}.csv"
    assert text.count("\n") == 2 and other.code in text and link.code not in text
    context.close()
