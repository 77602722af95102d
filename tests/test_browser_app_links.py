"""App deep links in Chromium (issue #28), at a phone's, a laptop's and a wide screen's width: the
create form's "App links" group refuses a javascript: iOS URL beside its field (the group open),
then takes an app scheme for iOS and a web address for Android; the created page and My links
name them. The short link opened in an iPhone's browser is sent to the app's scheme (which
Chromium cannot open: the 302's Location is read from the response), in an Android's to the
Android URL, which Chromium follows to its page. The Domain admin edits the association files.
Every page fits its width and passes axe-core.
"""

from __future__ import annotations

import contextlib
import json

import pytest

from tests.browser_support import (
    TARGET_TITLE,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

IOS_URL = "exampleshop://product/7"
# The user agents of serving/tests/test_app_links.py: Safari on an iPhone, Chrome on a Pixel.
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"
)
ASSETLINKS = json.dumps(
    [
        {
            "relation": ["delegate_permission/common.handle_all_urls"],
            "target": {
                "namespace": "android_app",
                "package_name": "com.example.shop",
                "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64"],
            },
        }
    ],
    indent=2,
)
AASA = json.dumps(
    {
        "applinks": {
            "details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/*"}]}]
        }
    },
    indent=2,
)


def _first_answer(browser, url: str, *, user_agent: str, width: int):
    """(status, Location) of the short link's own answer in a phone's browser, and the page:
    the navigation is followed as far as Chromium can (an app's scheme it cannot open)."""
    context = browser.new_context(user_agent=user_agent, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    answers = []
    page.on("response", lambda response: answers.append(response))
    from playwright.sync_api import Error as PlaywrightError

    with contextlib.suppress(PlaywrightError):  # an app's scheme is no page Chromium loads
        page.goto(url)
    # A failed navigation can raise before the redirect's own response event is handed over:
    # let Playwright deliver its events for a while before looking.
    for _ in range(100):
        first = next((answer for answer in answers if answer.url == url), None)
        if first is not None:
            break
        page.wait_for_timeout(100)
    assert first is not None, f"no answer from {url} in Chromium"
    return (first.status, first.headers.get("location")), context, page


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_app_links_from_the_form_to_the_phone(
    browser, live_server, user, artifacts_dir, target_url, width
):
    """The Android URL is the landing page (tests.browser_support.target_url), as an Android App
    Link is an https address the browser opens when no app claims it."""
    from links.models import UrlLink

    base = live_server.url
    alias = f"app-{width}"
    android_url = target_url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.get_by_text("Options:").click()
    page.get_by_label("Long URL").fill("https://example.com/product/7")
    page.get_by_label("Custom alias").fill(alias)
    page.get_by_text("App links:").click()
    page.get_by_label("iOS URL", exact=True).fill("javascript:alert(1)")
    page.get_by_label("Android URL", exact=True).fill(android_url)
    page.get_by_role("button", name="Shorten").click()
    group = page.locator("#app-links")
    assert group.get_attribute("open") is not None
    assert "javascript: URLs are refused" in group.locator(".errorlist").inner_text()
    assert not UrlLink.objects.filter(code=alias).exists()
    assert_fits_and_accessible(page, "create form with a refused iOS URL")

    page.get_by_label("iOS URL", exact=True).fill(IOS_URL)
    assert page.get_by_label("Android URL", exact=True).input_value() == android_url
    page.get_by_role("button", name="Shorten").click()
    assert page.get_by_test_id("ios-url").inner_text().strip() == IOS_URL
    assert page.get_by_test_id("android-url").inner_text().strip() == android_url
    assert_fits_and_accessible(page, "created page of a link with app links")

    page.goto(base + "/dashboard/")
    row = page.locator(f"tr[data-code='{alias}']")
    assert row.get_by_test_id("app-links").inner_text().strip() == "app links"
    assert_fits_and_accessible(page, "My links with a link with app links")

    page.goto(base + f"/dashboard/links/{alias}/edit/")
    assert page.locator("#app-links").get_attribute("open") is not None
    assert page.get_by_label("iOS URL", exact=True).input_value() == IOS_URL
    assert_fits_and_accessible(page, "edit form of a link with app links")
    shot = f"app-links-form-{width}.png"
    page.locator("#app-links").screenshot(path=f"{artifacts_dir}/{shot}")
    if width == 1280:
        keep_screenshot(artifacts_dir, shot)
    context.close()

    short_url = f"{base}/{alias}"
    answer, iphone, _ = _first_answer(browser, short_url, user_agent=IPHONE, width=width)
    assert answer == (302, IOS_URL)
    iphone.close()
    answer, android, phone_page = _first_answer(browser, short_url, user_agent=ANDROID, width=width)
    assert answer == (302, android_url)
    phone_page.wait_for_url(android_url)
    assert phone_page.locator("h1").inner_text() == TARGET_TITLE
    android.close()


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_the_domain_admin_edits_the_association_files(
    browser, live_server, staff_user, artifacts_dir, width
):
    from links.models import DEFAULT_DOMAIN_ID, Domain

    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "staffer", "s3cret-pass-3", path="/admin/login/")
    page.wait_for_url(base + "/admin/")
    page.goto(base + f"/admin/links/domain/{DEFAULT_DOMAIN_ID}/change/")
    page.get_by_label("Apple app-site-association").fill(AASA)
    page.get_by_label("Android assetlinks.json").fill(
        '{"relation": []}'
    )  # an object, not the array of statements
    page.get_by_role("button", name="Save", exact=True).click()
    error = page.locator(".field-assetlinks .errorlist")
    assert "JSON array" in error.inner_text()
    assert_fits_and_accessible(page, "Domain admin with a refused assetlinks.json")

    page.get_by_label("Android assetlinks.json").fill(ASSETLINKS)
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(base + "/admin/links/domain/")
    assert "/.well-known/assetlinks.json" in page.locator("#result_list").inner_text()
    assert_fits_and_accessible(page, "Domain list naming the files served")
    domain = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    assert (domain.apple_app_site_association, domain.assetlinks) == (AASA, ASSETLINKS)

    page.goto(base + f"/admin/links/domain/{DEFAULT_DOMAIN_ID}/change/")
    assert page.get_by_label("Android assetlinks.json").input_value() == ASSETLINKS
    assert_fits_and_accessible(page, "Domain admin with both association files")
    shot = f"admin-domain-app-files-{width}.png"
    page.locator("#domain_form fieldset").first.screenshot(path=f"{artifacts_dir}/{shot}")
    if width == 1280:
        keep_screenshot(artifacts_dir, shot)

    served = page.request.get(base + "/.well-known/assetlinks.json")
    assert served.status == 200
    assert served.headers["content-type"] == "application/json"
    assert served.json() == json.loads(ASSETLINKS)
    context.close()
