"""QR codes in a real browser (issue #14), at a phone's, a laptop's and a wide screen's width:
from My links to a link's QR page, the PNG downloaded at print size (2048 px) and the SVG, and
scans through the QR code's URL shown apart from clicks under "How people came" on the stats
page. The QR page fits its width and passes axe-core; on the pages other work is changing (My
links, the stats page) axe-core checks the parts this feature adds. Screenshots go to
test-artifacts/ (UPDATE_SCREENSHOTS=1: docs/screenshots/).
"""

import os
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from links.tests.helpers import read_png
from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    chromium_user_agent,
    deliver_visits,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]
LONG_URL = "https://example.com/spring-poster?utm_campaign=spring"


@pytest.fixture
def poster(user):
    from links.services.create import link_create

    return link_create(user=user, long_url=LONG_URL, alias="poster").link


def _serious_in(page, selector: str) -> list[str]:
    result = Axe().run(page, context={"include": [[selector]]}).response
    return [
        f"{rule['id']} ({rule['impact']})"
        for rule in result["violations"]
        if rule["impact"] in {"serious", "critical"}
    ]


def _download(page, link_name: str):
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name, exact=True).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


@pytest.mark.parametrize("width", WIDTHS)
def test_qr_downloads_and_scans_counted_apart(browser, live_server, poster, artifacts_dir, width):
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    # Two people scan the poster's QR code, one types the short link; the destination gets the
    # campaign's own query, never the marker.
    person = {"User-Agent": chromium_user_agent(browser)}
    for path in ("/poster?qr=1", "/poster?qr=1", "/poster"):
        answer = page.request.get(base + path, headers=person, max_redirects=0)
        assert answer.status == 302
        assert answer.headers["location"] == LONG_URL
    deliver_visits()

    # My links → the link's QR page, which fits the width and passes axe-core.
    page.goto(base + "/dashboard/")
    page.locator("tr[data-code=poster]").get_by_role("link", name="QR", exact=True).click()
    page.wait_for_url(base + "/dashboard/links/poster/qr/")
    assert page.get_by_role("heading", name="QR code for poster").is_visible()
    assert page.locator("figure.qr svg").is_visible()
    assert page.get_by_text("17.3 cm wide at 300 dpi").is_visible()
    assert_fits_and_accessible(page, f"QR page at {width}px")
    if width == 1280:
        page.screenshot(path=os.path.join(artifacts_dir, "qr-page.png"), full_page=True)
        keep_screenshot(artifacts_dir, "qr-page.png")

    name, png = _download(page, "PNG 2048 px")
    assert name == "poster-qr-2048.png"
    image = read_png(png)
    assert (image["width"], image["height"]) == (2048, 2048)
    name, svg = _download(page, "SVG")
    assert name == "poster-qr.svg"
    assert b"<svg" in svg and b"qrline" in svg

    # The stats page: "How people came", people only, QR code first.
    page.get_by_role("link", name="stats page").click()
    page.wait_for_url(base + "/dashboard/links/poster/")
    channels = page.locator("table[data-breakdown=channels]")
    channels.scroll_into_view_if_needed()
    assert channels.is_visible()
    assert page.get_by_role("heading", name="How people came").is_visible()
    rows = [row.inner_text().split() for row in channels.locator("tbody tr").all()]
    assert rows == [["QR", "code", "2", "66.7%"], ["Short", "link", "1", "33.3%"]]
    assert _serious_in(page, "section[aria-labelledby=bd-channels]") == []
    assert page.get_by_role("link", name="QR code (PNG, SVG)").get_attribute("href") == (
        "/dashboard/links/poster/qr/"
    )

    # The created page offers the same downloads.
    page.goto(base + "/?created=poster")
    downloads = page.get_by_test_id("qr-downloads")
    assert downloads.get_by_role("link", name="PNG 1024 px").is_visible()
    assert _serious_in(page, "[data-testid=qr-downloads]") == []
    context.close()


# The lines the text `part` of `element` is laid out on (distinct tops of its boxes).
_LINES_OF = """(el, part) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let text = '', nodes = [];
    while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]);
                                text += walker.currentNode.data; }
    const start = text.lastIndexOf(part), end = start + part.length;
    const range = document.createRange();
    for (const [node, at] of nodes) {
        if (start >= at && start <= at + node.data.length) range.setStart(node, start - at);
        if (end >= at && end <= at + node.data.length) { range.setEnd(node, end - at); break; }
    }
    return new Set([...range.getClientRects()].filter(r => r.width > 0)
                   .map(r => Math.round(r.top))).size;
}"""


def test_qr_page_keeps_the_short_codes_on_one_line_on_a_phone(browser, live_server, user):
    from links.services.create import link_create

    code = "spring-poster-campaign"
    link_create(user=user, long_url=LONG_URL, alias=code)
    base = live_server.url
    context, page = page_at_width(browser, 390)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.goto(f"{base}/dashboard/links/{code}/qr/")
    short_url = page.locator("[data-testid=qr-page] a.short-url")
    assert short_url.inner_text().replace("\n", "") == f"{base}/{code}"
    # Long enough to wrap at this width: before the code, never inside it.
    assert short_url.evaluate(_LINES_OF, f"{base}/{code}") >= 2
    assert short_url.evaluate(_LINES_OF, code) == 1
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert_fits_and_accessible(page, "QR page with a long code at 390px")
    context.close()
