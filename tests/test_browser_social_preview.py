"""Social previews in Chromium (issue #28), at a phone's, a laptop's and a wide screen's width: the
create form's "Social preview" group takes a title, a description and an image URL (a refused
http:// image is said beside its field, the group open); the created page names the preview, My
links marks the link, the edit form shows and clears it. Every page fits its width and passes
axe-core.
"""

import pytest

from tests.browser_support import (
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_the_social_preview_group(browser, live_server, user, artifacts_dir, width):
    from links.models import UrlLink

    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.get_by_text("Social preview:").click()
    page.get_by_label("Long URL").fill("https://example.com/spring")
    page.get_by_label("Preview title").fill("Spring sale: 30% off")
    page.get_by_label("Preview description").fill("Until Sunday, in every store and online.")
    page.get_by_label("Preview image URL").fill("http://cdn.example.com/spring.jpg")
    page.get_by_role("button", name="Shorten").click()
    error = page.locator("#social-preview .errorlist")
    assert "https://" in error.inner_text()
    assert page.locator("#social-preview").get_attribute("open") is not None
    assert_fits_and_accessible(page, "create form with a refused preview image")
    shot = f"social-preview-form-{width}.png"
    page.screenshot(path=f"{artifacts_dir}/{shot}", full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, shot)

    page.get_by_label("Preview image URL").fill("https://cdn.example.com/spring.jpg")
    page.get_by_role("button", name="Shorten").click()
    settings = page.get_by_test_id("link-settings")
    assert "Spring sale: 30% off" in settings.inner_text()
    link = UrlLink.objects.get(long_url="https://example.com/spring")
    assert (link.og_title, link.og_image) == (
        "Spring sale: 30% off",
        "https://cdn.example.com/spring.jpg",
    )
    assert_fits_and_accessible(page, "created page of a link with a preview")

    page.goto(base + "/dashboard/")
    row = page.locator(f"tr[data-code='{link.code}']")
    assert row.get_by_test_id("preview-badge").inner_text().strip() == "Social preview"
    assert_fits_and_accessible(page, "My links with a link with a preview")

    page.goto(base + f"/dashboard/links/{link.code}/edit/")
    assert page.get_by_label("Preview title").input_value() == "Spring sale: 30% off"
    assert_fits_and_accessible(page, "edit form of a link with a preview")
    page.get_by_label("Preview title").fill("")
    page.get_by_label("Preview description").fill("")
    page.get_by_label("Preview image URL").fill("")
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(base + "/dashboard/")
    link.refresh_from_db()
    assert not link.has_preview
    context.close()
