"""Conversions in Chromium (issue #29), at a phone's, a laptop's and a wide screen's width: a
tracked short link lands on a shop's page that loads the product's snippet
(/static/js/conversions.js); the snippet keeps the click id from the address in a first-party
cookie, so a later page of the shop without it still has window.shorturl.clickId(). The shop's
server reports a lead and a sale with it; the link's stats page shows the funnel (1 click,
1 lead, 1 sale, 49.90 EUR) and fits the width, axe-clean.
"""

from __future__ import annotations

import http.server
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command

from tests.browser_support import (
    TARGET_HOST,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
    served_on_loopback,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

PERSON = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"


def _shop(snippet_url: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Shop(http.server.BaseHTTPRequestHandler):
        """Every path is a page of the shop that loads the snippet."""

        def do_GET(self):
            body = (
                "<!doctype html><html lang='en'><title>Shop</title><h1>Shop</h1>"
                f"<script src='{snippet_url}'></script>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Shop


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_the_snippet_keeps_the_click_id_and_the_page_shows_the_funnel(
    browser, live_server, user, artifacts_dir, width
):
    from analytics.services import lead_track, sale_track
    from links.models import CLICK_ID_PARAM
    from links.services.create import link_create

    base = live_server.url
    with served_on_loopback(_shop(f"{base}/static/js/conversions.js")) as port:
        shop = f"http://{TARGET_HOST}:{port}"
        link = link_create(
            user=user, long_url=f"{shop}/landing", alias=f"shop-{width}", track_conversions=True
        ).link
        # A person's browser: headless Chromium's own User-Agent is counted as a bot's.
        context = browser.new_context(user_agent=PERSON, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{base}/{link.code}")
        page.wait_for_url(f"{shop}/landing?*")
        click_id = parse_qs(urlsplit(page.url).query)[CLICK_ID_PARAM][0]
        page.wait_for_function("() => window.shorturl && window.shorturl.clickId()")
        assert page.evaluate("window.shorturl.clickId()") == click_id
        [cookie] = [c for c in context.cookies() if c["name"] == CLICK_ID_PARAM]
        assert (cookie["value"], cookie["sameSite"]) == (click_id, "Lax")
        assert cookie["expires"] > 0  # kept 90 days, not for the session only
        # A later page of the shop, without the id in its address, still knows the click.
        page.goto(f"{shop}/checkout")
        page.wait_for_function("() => window.shorturl && window.shorturl.clickId()")
        assert page.evaluate("window.shorturl.clickId()") == click_id
        context.close()

    # The shop's server reports them (the API's service; test_conversions covers the HTTP).
    lead_track(user=user, click_id=click_id, event_name="Sign up", customer_id="cus_1")
    sale_track(
        user=user,
        click_id=click_id,
        amount=4990,
        currency="EUR",
        event_name="Purchase",
        invoice_id="INV-1",
    )
    call_command("drain_visits", verbosity=0)
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(f"{base}/dashboard/links/{link.code}/")
    funnel = page.get_by_test_id("conversions")
    funnel.wait_for()
    assert page.get_by_test_id("funnel-clicks").inner_text() == "1"
    assert page.get_by_test_id("funnel-leads").inner_text() == "1"
    assert page.get_by_test_id("funnel-sales").inner_text() == "1"
    assert page.get_by_test_id("funnel-revenue").inner_text() == "49.90 EUR"
    assert page.get_by_test_id("lead-rate").inner_text() == "100.0%"
    assert_fits_and_accessible(page, "link stats page with conversions")
    shot = f"conversions-funnel-{width}.png"
    funnel.screenshot(path=f"{artifacts_dir}/{shot}")
    if width == 1280:
        keep_screenshot(artifacts_dir, shot)
    context.close()


def test_a_malformed_click_id_in_the_address_leaves_the_snippet_working(browser, live_server):
    """?sc_cid=%E0 is no UTF-8: decoding it throws, which must not stop the snippet defining
    window.shorturl (the cookie's id, from an earlier click, is still given)."""
    base = live_server.url
    with served_on_loopback(_shop(f"{base}/static/js/conversions.js")) as port:
        shop = f"http://{TARGET_HOST}:{port}"
        context = browser.new_context(user_agent=PERSON)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{shop}/landing?sc_cid=%E0")
        page.wait_for_function("() => window.shorturl !== undefined")
        assert page.evaluate("window.shorturl.clickId()") is None
        earlier = "ab" * 16
        page.goto(f"{shop}/landing?sc_cid={earlier}")
        page.wait_for_function(f"() => window.shorturl.clickId() === '{earlier}'")
        page.goto(f"{shop}/checkout?sc_cid=%E0%A4")
        page.wait_for_function("() => window.shorturl !== undefined")
        assert page.evaluate("window.shorturl.clickId()") == earlier
        context.close()
