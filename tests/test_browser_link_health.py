"""Destination health in Chromium (issue #29), at a phone's, a laptop's and a wide screen's
width: My links badges the link whose destination is broken ("Broken destination", "→ failover")
and its Destination filter keeps only that one; the link's page says since when it is broken,
where its visitors go meanwhile, and lists the latest checks; Chromium following the short link
lands on the failover page. Every page fits its width and passes axe-core.
"""

import os

import pytest

from tests.browser_support import (
    TARGET_TITLE,
    assert_fits_and_accessible,
    chromium_user_agent,
    keep_screenshot,
    log_in,
    needs_chromium,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_my_links_and_the_link_page_show_a_broken_destination(
    browser, live_server, user, artifacts_dir, target_url, width
):
    """The failover URL is the landing page (tests.browser_support.target_url), reached by a
    name the URL policy takes; the checks are recorded as the checker records them."""
    from links.checker import CheckResult
    from links.services import health
    from links.services.create import link_create

    fine = link_create(user=user, long_url="https://example.com/fine", alias=f"fine-{width}").link
    broken = link_create(
        user=user,
        long_url="https://example.com/gone",
        alias=f"gone-{width}",
        fallback_url=target_url,
    ).link
    health.record_checks(
        link=fine, results=[CheckResult(url=fine.long_url, ok=True, status_code=200)]
    )
    failed = CheckResult(
        url=broken.long_url,
        ok=False,
        status_code=503,
        error="http",
        detail=f"{broken.long_url} answered 503.",
    )
    for _ in range(2):
        health.record_checks(link=broken, results=[failed])

    base = live_server.url
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.goto(base + "/dashboard/")
    row = page.locator(f"tr[data-code='gone-{width}']")
    assert row.get_by_test_id("health-badge").inner_text().strip() == "Broken destination"
    assert row.get_by_test_id("failover").inner_text().strip() == "→ failover"
    assert page.locator(f"tr[data-code='fine-{width}']").get_by_test_id("health-badge").count() == 0
    assert_fits_and_accessible(page, "My links with a broken destination")

    page.get_by_label("Destination").select_option("broken")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**health=broken**")
    codes = page.locator("tr[data-code]").evaluate_all("rows => rows.map(r => r.dataset.code)")
    assert codes == [f"gone-{width}"]
    assert_fits_and_accessible(page, "My links filtered to broken destinations")

    row = page.locator(f"tr[data-code='gone-{width}']")
    row.get_by_role("link", name="Stats").click()
    page.wait_for_url(f"**/dashboard/links/gone-{width}/**")
    section = page.get_by_test_id("link-health")
    assert page.get_by_test_id("health-status").inner_text().strip() == "Broken"
    assert "Broken since" in section.inner_text() and target_url in section.inner_text()
    assert page.get_by_test_id("health-checks").locator("tbody tr").count() == 2
    assert_fits_and_accessible(page, "link page of a broken link")
    if width == 1280:
        name = "link-health-stats.png"
        page.screenshot(path=os.path.join(artifacts_dir, name), full_page=True)
        keep_screenshot(artifacts_dir, name)

    page.goto(base + f"/gone-{width}")
    page.wait_for_url(target_url)
    assert page.locator("h1").inner_text() == TARGET_TITLE
    context.close()
