"""A link's options confirmed in Chromium (issue #27's walk): after making a link with a password,
a visit limit and tags, the created page says so (the password only as "Set", never shown), and
so does its stats page, with its rules and variants; both fit a phone and a laptop and pass
axe-core.
"""

import pytest

from tests.browser_support import assert_fits_and_accessible, log_in, needs_chromium, page_at_width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]
SECRET = "open-sesame-42"


def _settings(page) -> dict[str, str]:
    box = page.get_by_test_id("link-settings")
    return {
        item.locator("dt").inner_text().strip(): item.locator("dd").inner_text().strip()
        for item in box.locator("div").all()
    }


@pytest.mark.parametrize("width", [390, 1280])
def test_created_and_stats_pages_confirm_the_links_options(browser, live_server, user, width):
    from links.models import UrlLink
    from links.services.create import link_create

    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.get_by_label("Long URL").fill("https://example.com/members-sale")
    page.get_by_text("Options:").click()
    page.get_by_label("Custom alias").fill("members-sale")
    page.get_by_label("Password").fill(SECRET)
    page.get_by_label("Visit limit").fill("50")
    page.get_by_text("Advanced").first.click()
    page.get_by_label("Tags").fill("spring, VIP")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    assert _settings(page) == {"Password": "Set", "Visit limit": "50 visits", "Tags": "spring, VIP"}
    assert SECRET not in page.content()
    assert_fits_and_accessible(page, "created page with options")

    page.get_by_role("link", name="See its clicks").click()
    page.wait_for_url(base + "/dashboard/links/members-sale/")
    assert _settings(page) == {"Password": "Set", "Visit limit": "50 visits", "Tags": "spring, VIP"}
    assert SECRET not in page.content()
    assert UrlLink.objects.get(code="members-sale").max_visits == 50

    # A plain link says it has no password; rules and variants are counted when set.
    link_create(
        user=user,
        long_url="https://example.com/world",
        alias="world",
        rules=[{"country": "FR", "url": "https://fr.example/"}],
        variants=[
            {"url": "https://a.example/", "weight": 70},
            {"url": "https://b.example/", "weight": 30},
        ],
    )
    page.goto(base + "/dashboard/links/world/")
    assert _settings(page) == {"Password": "Not set", "Rules": "1 rule", "Variants": "2 variants"}
    assert_fits_and_accessible(page, "stats page with rules and variants")
    context.close()
