"""The workspace page's raw visit retention setting in Chromium (issue #30), at a phone's, a
laptop's and a wide screen's width: an owner saves a number of days, the page says it applies,
and the page fits its width and passes axe-core."""

import pytest
from playwright.sync_api import expect

from tests.browser_support import (
    assert_fits_and_accessible,
    chromium_user_agent,
    log_in,
    needs_chromium,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_an_owner_sets_raw_visit_retention(browser, live_server, user, width):
    from workspaces.services import workspace_create

    workspace = workspace_create(user=user, name=f"Retain {width}", slug=f"retain-{width}")
    base = live_server.url
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.goto(f"{base}/workspaces/{workspace.slug}/")
    expect(page.get_by_role("heading", name="Raw visit retention")).to_be_visible()
    assert_fits_and_accessible(page, "Workspace page with its retention setting")
    page.get_by_label("Keep raw visits for (days)").fill("30")
    page.get_by_role("button", name="Save retention").click()
    expect(page.get_by_text("Raw visit retention saved.")).to_be_visible()
    expect(page.get_by_text("Now: 30 days.")).to_be_visible()
    assert page.get_by_label("Keep raw visits for (days)").input_value() == "30"
    assert_fits_and_accessible(page, "Workspace page after saving its retention")
    workspace.refresh_from_db()
    assert workspace.raw_retention_days == 30
    context.close()
