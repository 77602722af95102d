"""A workspace's privacy mode in a real browser (Playwright + Debian's Chromium) at 390, 1280
and 1920 px, with axe-core: its owner reads the mode in force on the workspace's page, chooses
"none" and sees it saved; the stats page then says unique visitors are exact within each day
(issue #30)."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from links.services.create import link_create
from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)
from workspaces.models import Workspace
from workspaces.services import workspace_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", WIDTHS)
def test_an_owner_chooses_the_privacy_mode_of_their_workspace(
    browser, live_server, user, width, artifacts_dir, settings
):
    settings.ANALYTICS_PRIVACY = "full"
    workspace_create(user=user, name="Acme marketing", slug="acme")
    link = link_create(user=user, long_url="https://ex.com/privacy", workspace="acme").link
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(base + "/workspaces/acme/")
    section = page.get_by_test_id("workspace-privacy")
    expect(section.get_by_test_id("privacy-mode")).to_have_text("full")
    assert_fits_and_accessible(page, "workspace page with its privacy mode")

    page.get_by_role("combobox", name="Visitor privacy").select_option("none")
    page.get_by_role("button", name="Save privacy mode").click()
    page.wait_for_url(base + "/workspaces/acme/")
    expect(page.get_by_test_id("privacy-mode")).to_have_text("none")
    expect(page.locator(".messages")).to_contain_text("privacy mode")
    assert Workspace.objects.get(slug="acme").analytics_privacy == "none"
    assert_fits_and_accessible(page, "workspace page after choosing none")
    page.screenshot(
        path=os.path.join(artifacts_dir, f"workspace-privacy-{width}.png"), full_page=True
    )
    if width == 1280:
        keep_screenshot(artifacts_dir, "workspace-privacy-1280.png")

    page.goto(base + f"/dashboard/links/{link.code}/")
    expect(page.get_by_test_id("uniques-exact-within")).to_contain_text("exact within each day")
    assert_fits_and_accessible(page, "stats page in the none mode")
    context.close()
