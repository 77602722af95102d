"""In a real browser, at phone, laptop and desktop widths: a marketer makes, uses and revokes an
API key and sees times in their own zone; staff find the overview, revoke from the link page
and read the code pool as counts. Every page fits its width and passes axe-core (no serious or
critical violation). Screenshots go to test-artifacts/ (UPDATE_SCREENSHOTS=1: docs/screenshots/).
"""

import datetime as dt
import os

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


def shot(page, artifacts_dir: str, name: str, width: int) -> None:
    if width == 1280:  # the docs show the laptop width
        page.screenshot(path=os.path.join(artifacts_dir, name), full_page=True)
        keep_screenshot(artifacts_dir, name)


@pytest.mark.parametrize("width", WIDTHS)
def test_marketer_makes_uses_and_revokes_an_api_key(
    browser, live_server, user, width, artifacts_dir
):
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    # The navigation leads to the keys page and to the API docs.
    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="API docs").get_attribute("href") == "/api/v1/docs/"
    nav.get_by_role("link", name="API keys").click()
    page.wait_for_url(base + "/accounts/api-keys/")
    assert "no API keys yet" in page.content()
    assert_fits_and_accessible(page, "API keys, none yet")

    page.get_by_label("Name").fill("Newsletter tool")
    page.get_by_role("button", name="Make key").click()
    key = page.get_by_test_id("new-key").inner_text().strip()
    assert key.startswith("su_")
    row = page.locator("tr[data-key-name='Newsletter tool']")
    assert "Never used" in row.inner_text()
    assert_fits_and_accessible(page, "API keys, new key shown")
    shot(page, artifacts_dir, "api-keys.png", width)

    # The key works against the API; the page then says it was used, and never shows it again.
    answer = page.request.get(
        f"{base}/api/v1/links/",
        headers={"Authorization": f"Token {key}"},
        fail_on_status_code=False,
    )
    assert answer.status == 200
    page.reload()
    assert key not in page.content()
    assert "Never used" not in row.inner_text()

    # Revoked: the API refuses it at once.
    row.get_by_role("button", name="Revoke the key Newsletter tool").click()
    page.get_by_role("status").filter(has_text="Revoked the key").wait_for()
    assert "Revoked" in row.inner_text()
    assert_fits_and_accessible(page, "API keys, after revoking")
    again = page.request.get(
        f"{base}/api/v1/links/",
        headers={"Authorization": f"Token {key}"},
        fail_on_status_code=False,
    )
    assert again.status == 401
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_times_are_in_the_browsers_zone_then_the_chosen_one(
    browser, live_server, user, width, artifacts_dir
):
    from accounts.middleware import database_converts_time_zones
    from links.models import UrlLink

    if not database_converts_time_zones():
        pytest.skip("MySQL/MariaDB without time zone tables: pages stay in TIME_ZONE")
    base = live_server.url
    context = browser.new_context(
        viewport={"width": width, "height": 900}, timezone_id="America/New_York"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    # The browser's zone is used from the next page on, and the page says so.
    page.goto(base + "/dashboard/")
    assert "Times in America/New_York" in page.get_by_test_id("nav-time-zone").inner_text()

    # An expiry typed in is read in that zone.
    page.goto(base + "/")
    page.get_by_label("Long URL").fill("https://example.com/summer-sale")
    page.get_by_text("Options: alias, title, start and expiry, redirect type").click()
    assert "Times are in America/New_York" in page.content()
    page.get_by_label("Expires").fill("2030-07-01T12:00")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    link = UrlLink.objects.get(owner=user)
    assert link.expires_at == dt.datetime(2030, 7, 1, 16, 0, tzinfo=dt.UTC)  # EDT is UTC-4

    # Choosing a zone in Preferences wins over the browser's.
    page.get_by_test_id("nav-time-zone").click()
    page.wait_for_url(base + "/accounts/preferences/")
    assert_fits_and_accessible(page, "preferences")
    page.get_by_label("Time zone").select_option("Asia/Tokyo")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("status").filter(has_text="Saved").wait_for()
    assert page.get_by_test_id("active-time-zone").inner_text() == "Asia/Tokyo"
    shot(page, artifacts_dir, "preferences.png", width)
    page.goto(base + "/dashboard/")
    assert "2030-07-02 01:00" in page.locator(f"tr[data-code='{link.code}']").inner_text()
    assert "Times in Asia/Tokyo" in page.get_by_test_id("nav-time-zone").inner_text()
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_staff_find_the_overview_revoke_on_the_link_page_and_see_pool_counts(
    browser, live_server, user, staff_user, width, artifacts_dir
):
    from links.models import UniqueCode
    from links.tests.factories import UrlLinkFactory

    link = UrlLinkFactory(owner=user, long_url="https://example.com/" + "very-long-path-" * 30)
    UniqueCode.objects.bulk_create([UniqueCode(code=f"p{i:05d}q") for i in range(25)])
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "staffer", "s3cret-pass-3", path="/admin/login/")
    page.wait_for_url(base + "/admin/")

    assert page.get_by_role("link", name="Short links").is_visible()
    assert page.get_by_role("link", name="Code pool").is_visible()
    assert page.get_by_role("link", name="Staff overview").get_attribute("href") == (
        "/dashboard/overview/"
    )
    assert_fits_and_accessible(page, "admin index")

    page.goto(f"{base}/admin/links/urllink/{link.pk}/change/")
    long_url = page.locator(".long-url-wrap")
    box = long_url.bounding_box()
    assert box["x"] + box["width"] <= width, "the long URL runs off the page"
    assert "Seq id" not in page.content()
    assert_fits_and_accessible(page, "admin link page")
    shot(page, artifacts_dir, "admin-link-revoke.png", width)
    page.get_by_role("button", name="Revoke this link").click()
    page.get_by_text(f"Revoked {link.code}").wait_for()
    assert page.request.get(f"{base}/{link.code}", max_redirects=0).status == 410

    page.goto(f"{base}/admin/links/uniquecode/")
    assert "Unused: 25" in page.get_by_test_id("pool-counts").inner_text()
    assert "p00001q" not in page.content()
    assert_fits_and_accessible(page, "code pool")
    shot(page, artifacts_dir, "admin-code-pool.png", width)
    context.close()
