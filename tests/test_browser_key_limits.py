"""In a real browser, at phone, laptop and desktop widths: a marketer gives a new API key a
limit of requests per minute, then changes it in the key's row; the API then answers that key
with the limit in its RateLimit-* headers and refuses it past the limit. The workspace's page
sets the default for keys without one. The page fits its width
and passes axe-core (no serious or critical violation)."""

import pytest
from playwright.sync_api import expect

from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    log_in,
    needs_chromium,
    page_at_width,
)
from workspaces.selectors import personal_workspace_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


@pytest.mark.parametrize("width", WIDTHS)
def test_marketer_sets_a_keys_limit_and_the_api_holds_it(browser, live_server, user, width):
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.goto(base + "/accounts/api-keys/")

    page.get_by_label("Name").fill("Newsletter tool")
    page.get_by_label("Requests per minute", exact=True).fill("5")
    page.get_by_role("button", name="Make key").click()
    expect(page.get_by_test_id("new-key")).to_be_visible()
    key = page.get_by_test_id("new-key").inner_text().strip()
    limit = page.get_by_label(
        "Requests per minute for the key Newsletter tool (empty: the workspace's default)"
    )
    expect(limit).to_have_value("5")
    assert_fits_and_accessible(page, "API keys, a key with a limit")

    # Changed in its row: 2 a minute from the next request.
    limit.fill("2")
    page.get_by_role("button", name="Set the limit of the key Newsletter tool").click()
    expect(page.get_by_text("is limited to 2 requests per minute")).to_be_visible()
    expect(limit).to_have_value("2")
    assert_fits_and_accessible(page, "API keys, limit changed")

    answers = [
        page.request.get(
            f"{base}/api/v1/links/",
            headers={"Authorization": f"Token {key}"},
            fail_on_status_code=False,
        )
        for _ in range(3)
    ]
    assert [a.status for a in answers] == [200, 200, 429]
    assert [a.headers["ratelimit-remaining"] for a in answers] == ["1", "0", "0"]
    assert int(answers[2].headers["retry-after"]) >= 1

    # A limit of 0 is refused, saying why; the key keeps its limit.
    limit.fill("0")
    limit.evaluate("input => input.removeAttribute('min')")
    page.get_by_role("button", name="Set the limit of the key Newsletter tool").click()
    expect(
        page.get_by_text("Requests per minute: Ensure this value is greater than")
    ).to_be_visible()
    expect(limit).to_have_value("2")

    # The workspace's default, on its page, for keys without a limit of their own.
    page.goto(f"{base}/workspaces/{personal_workspace_of(user).slug}/")
    page.get_by_label("Requests per minute for each key").fill("30")
    page.get_by_role("button", name="Save limit").click()
    expect(page.get_by_text("limited to 30 requests per minute")).to_be_visible()
    expect(page.get_by_label("Requests per minute for each key")).to_have_value("30")
    assert_fits_and_accessible(page, "Workspace, its keys' default limit")
    context.close()
