"""The QR designer (#28) in Chromium at a phone's, a laptop's and a wide screen's width: the
preview follows the colour pickers before anything is saved, says why colours too close to scan
are refused, and a saved design with a logo is what the page and its downloads show. The page
fits its width and passes axe-core. Screenshot: test-artifacts/ (UPDATE_SCREENSHOTS=1:
docs/screenshots/qr-designer-1280.png)."""

import io
import os
import re

import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

NAVY, CREAM = "#1d2a5c", "#fff4d6"


def _logo(path) -> str:
    image = Image.new("RGBA", (200, 200), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((10, 10, 190, 190), fill=(225, 29, 72, 255))
    image.save(path, format="PNG")
    return str(path)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_preview_follows_the_form_and_a_saved_design_is_kept(
    browser, live_server, user, width, artifacts_dir, settings, tmp_path
):
    from links.models import QrDesign
    from links.services.create import link_create

    settings.MEDIA_ROOT = str(tmp_path / "media")
    link = link_create(user=user, long_url="https://example.com/spring-sale").link
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(f"{base}/dashboard/links/{link.code}/qr/")
    assert page.locator("figure.qr svg").is_visible()  # the plain code, drawn in the page
    assert_fits_and_accessible(page, "QR page with its designer")
    holder = page.locator("#qr-preview")

    # The preview follows the pickers at once, nothing saved; each design is drawn once.
    drawn = []
    page.on("request", lambda request: "/qr/preview" in request.url and drawn.append(request.url))
    page.get_by_label("Code colour").fill(NAVY)
    page.get_by_label("Background colour").fill(CREAM)
    expect(holder).to_have_attribute("data-preview-src", re.compile("background=%23fff4d6"))
    assert len(drawn) == len(set(drawn)) == 2, drawn
    assert page.locator("#qr-preview img").is_visible()
    assert "not saved yet" in page.locator("#qr-preview-status").inner_text()
    assert not QrDesign.objects.exists()

    # Too close to scan: said so, the last good preview kept.
    good_src = holder.get_attribute("data-preview-src")
    page.get_by_label("Code colour").fill("#f0e0c0")
    expect(holder).to_have_attribute("data-preview-state", "refused")
    assert "too close to scan" in page.locator("#qr-preview-status").inner_text()
    assert holder.get_attribute("data-preview-src") == good_src
    assert page.locator("#qr-preview img").get_attribute("src") == good_src
    assert_fits_and_accessible(page, "QR designer refusing low contrast")

    # Saved with a logo: the page comes back drawing it.
    page.get_by_label("Code colour").fill(NAVY)
    page.get_by_label("Centre logo").set_input_files(_logo(tmp_path / "logo.png"))
    page.get_by_role("button", name="Save design").click()
    page.get_by_text("QR design saved").wait_for()
    design = QrDesign.objects.get(link=link)
    assert (design.foreground, design.background, design.error_level) == (NAVY, CREAM, "h")
    assert page.get_by_label("Code colour").input_value() == NAVY
    assert page.locator("#qr-preview svg image").count() == 1  # the logo, inline
    png = page.request.get(f"{base}/dashboard/links/{link.code}/qr.png?size=256")
    with Image.open(io.BytesIO(png.body())) as image:
        assert image.size == (256, 256)
        assert image.convert("RGB").getpixel((1, 1)) == (0xFF, 0xF4, 0xD6)
    assert_fits_and_accessible(page, "QR page with a saved design")
    page.screenshot(path=os.path.join(artifacts_dir, f"qr-designer-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, f"qr-designer-{width}.png")

    # Reset: the plain code again.
    page.get_by_role("button", name="Reset to plain").click()
    page.get_by_text("back to plain black on white").wait_for()
    assert not QrDesign.objects.exists()
    context.close()
