"""A link's start in Chromium (issue #27), at a phone's, a laptop's and a wide screen's width: the
create and edit forms have a "Starts" date and time beside "Expires" (the same widget, the same
look; side by side where the form has two columns, Starts first; one above the other on a
phone). A link made with a start says when it starts, and My links shows it Scheduled. Every
page fits its width and passes axe-core.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.browser_support import assert_fits_and_accessible, log_in, needs_chromium, page_at_width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

_INPUT_LOOK = """(el) => { const s = getComputedStyle(el); return {
    type: el.type, border: s.borderTopWidth + ' ' + s.borderTopStyle + ' ' + s.borderTopColor,
    radius: s.borderTopLeftRadius, padding: s.paddingLeft, height: el.offsetHeight,
    font: s.fontSize + ' ' + s.fontFamily, width: el.offsetWidth }; }"""


def _assert_beside_the_expiry(page, width: int, where: str) -> None:
    starts, expires = page.get_by_label("Starts"), page.get_by_label("Expires")
    assert starts.evaluate(_INPUT_LOOK) == expires.evaluate(_INPUT_LOOK), where
    assert starts.evaluate(_INPUT_LOOK)["type"] == "datetime-local", where
    first, second = starts.bounding_box(), expires.bounding_box()
    if width >= 640:  # the form's two columns (40rem)
        assert abs(first["y"] - second["y"]) < 2, f"{where}: not on one row: {first} {second}"
        assert first["x"] + first["width"] <= second["x"], f"{where}: Starts not first"
    else:
        assert first["y"] + first["height"] <= second["y"], f"{where}: Starts not above"
        assert abs(first["x"] - second["x"]) < 2, where


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_the_starts_field_beside_the_expiry(browser, live_server, user, width):
    from links.models import LinkStatus, UrlLink

    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.get_by_text("Options:").click()
    _assert_beside_the_expiry(page, width, "create form")
    assert_fits_and_accessible(page, "create form with its options open")
    start = timezone.localtime(timezone.now() + timedelta(days=2)).replace(second=0, microsecond=0)
    page.get_by_label("Long URL").fill("https://example.com/launch-day")
    page.get_by_label("Custom alias").fill("launch-day")
    page.get_by_label("Starts").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Shorten").click()
    created = page.get_by_test_id("created-link")
    assert f"starts {start:%Y-%m-%d %H:%M}" in created.inner_text()
    link = UrlLink.objects.get(code="launch-day")
    assert (link.valid_since, link.status) == (start, LinkStatus.SCHEDULED)
    assert_fits_and_accessible(page, "created page of a scheduled link")

    page.goto(base + "/dashboard/")
    row = page.locator("tr[data-code='launch-day']")
    assert row.locator(".badge").inner_text().strip() == "Scheduled"
    assert f"starts {start:%Y-%m-%d}" in row.get_by_test_id("starts").inner_text()
    assert_fits_and_accessible(page, "My links with a scheduled link")

    page.goto(base + "/dashboard/links/launch-day/edit/")
    assert page.get_by_label("Starts").input_value() == start.strftime("%Y-%m-%dT%H:%M")
    _assert_beside_the_expiry(page, width, "edit form")
    assert_fits_and_accessible(page, "edit form of a scheduled link")
    page.get_by_label("Starts").fill("")
    page.get_by_role("button", name="Save changes").click()
    page.wait_for_url(base + "/dashboard/")
    link.refresh_from_db()
    assert (link.valid_since, link.status) == (None, LinkStatus.ACTIVE)
    context.close()
