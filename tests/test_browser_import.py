"""Issue #16's import page in a real browser (Playwright + Debian's Chromium) at 390, 1280 and
1920 px: a marketer picks a Bitly export, the page follows the background run, and the report
lists the rows that got new codes or were left out, each with its line and reason; every state
fits the window and passes axe."""

import os
from pathlib import Path

import pytest

from links.imports import service as imports
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

BITLY = Path(__file__).parent.parent / "links" / "imports" / "tests" / "fixtures" / "imports"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_bitly_export_uploaded_and_its_report_read(
    browser, live_server, user, other_user, width, artifacts_dir
):
    link_create(user=other_user, long_url="https://rival.example.com/", alias="taken-code")
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(base + "/dashboard/")
    page.get_by_role("link", name="Import or export").click()
    page.wait_for_url(base + "/dashboard/import/")
    assert_fits_and_accessible(page, "import page")
    page.screenshot(path=os.path.join(artifacts_dir, f"import-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "import-1280.png")

    page.get_by_label("File", exact=True).set_input_files(str(BITLY / "bitly_api_fields.csv"))
    page.get_by_role("button", name="Upload and import").click()
    page.wait_for_selector("text=Waiting to start")
    assert_fits_and_accessible(page, "import waiting")

    imports.link_import_run_queued()  # the node runner's import thread, here in the test
    # The page notices by itself, says so, and offers the report.
    page.get_by_role("link", name="Show the report").click()
    summary = page.get_by_test_id("import-summary").inner_text()
    assert summary.startswith("Imported 6 links (3 with their old codes, 3 with new codes)")
    skipped = page.locator("table.import-rows").first
    assert "Only http and https URLs can be shortened." in skipped.inner_text()
    assert skipped.locator("tr[data-row='10']").inner_text().count("Repeats line 2") == 1
    assert_fits_and_accessible(page, "import report")
    page.screenshot(path=os.path.join(artifacts_dir, f"import-report-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, "import-report-1280.png")
    context.close()
