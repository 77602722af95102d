"""The Content-Security-Policy breaks nothing: the product's pages, the admin and Swagger UI load in
Chromium without one policy violation (issue #12 row 10)."""

import pytest

from links.tests.factories import UrlLinkFactory
from tests.browser_support import log_in, needs_chromium

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    needs_chromium,
]


def test_pages_admin_and_swagger_ui_work_under_the_policy(browser, live_server, staff_user):
    link = UrlLinkFactory(owner=staff_user, long_url="https://example.com/csp")
    base = live_server.url
    page = browser.new_page()
    page.set_default_timeout(15_000)
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )

    log_in(page, base, "staffer", "s3cret-pass-3")
    page.wait_for_url(base + "/")
    for path in (
        "/",
        "/dashboard/",
        "/dashboard/overview/",
        f"/dashboard/links/{link.code}/",
        "/admin/",
        f"/admin/links/urllink/{link.pk}/change/",
        "/admin/links/uniquecode/",
    ):
        response = page.goto(base + path)
        assert response.status == 200, path
        assert response.headers["content-security-policy"], path
        page.wait_for_load_state("load")

    page.goto(base + "/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .info .title")  # the start-up script ran
    assert "shorturl API" in page.locator(".swagger-ui .info .title").inner_text()
    page.wait_for_selector(".opblock")  # and it read the schema
    assert not violations, violations
