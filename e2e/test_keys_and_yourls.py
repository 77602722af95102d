"""Issue #16's first pieces over HTTP against both deployments: an API key made on the keys page
with some scopes does what they allow and is refused the rest (403 naming the scope), and the
`yourls` client from PyPI (what YOURLS tools are built on) shortens, expands and reads stats
through `/yourls-api.php` with a key as its signature, clicks counted once they are stored."""

from __future__ import annotations

import re
import secrets

import harness
import pytest
from harness import HTTP_TIMEOUT

yourls = pytest.importorskip("yourls")  # requirements-dev.txt pins it


def _make_key(dep: harness.Deployment, name: str, scopes: list[str]) -> str:
    """A key made on /accounts/api-keys/ by the demo marketer, as a browser does; the key."""
    browser = harness.login(dep, "demo", "demo")
    page = browser.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, page.text[:500]
    made = harness.post_form(
        dep,
        browser,
        "/accounts/api-keys/",
        page.text,
        {"name": name, "scopes": scopes, "expires_in": "30"},
    )
    assert made.status_code == 302, f"making a key → {made.status_code}: {made.text[:800]}"
    shown = browser.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT).text
    key = re.search(r'data-testid="new-key">([^<]+)<', shown)
    assert key, f"the new key is not on the page: {shown[:1500]}"
    return key.group(1).strip()


def test_a_scoped_key_does_what_its_scopes_allow_and_is_refused_the_rest(deployment):
    key = _make_key(deployment, f"reader-{secrets.token_hex(3)}", ["links:read"])
    api = deployment.session()
    api.headers["Authorization"] = f"Token {key}"
    listed = api.get(deployment.url("/api/v1/links/"), timeout=HTTP_TIMEOUT)
    assert listed.status_code == 200, listed.text[:500]
    created = api.post(
        deployment.url("/api/v1/links/"),
        json={"long_url": harness.unique_url("scoped")},
        timeout=HTTP_TIMEOUT,
    )
    assert created.status_code == 403, created.text[:500]
    assert "lacks the scope links:write" in created.json()["detail"]


def test_the_yourls_client_shortens_expands_and_reads_clicks(deployment):
    key = _make_key(deployment, f"yourls-{secrets.token_hex(3)}", ["links:read", "links:write"])
    client = yourls.YOURLSClient(deployment.url("/yourls-api.php"), signature=key)
    long_url = harness.unique_url("yourls")
    shortened = client.shorten(long_url)
    assert shortened.url == long_url
    assert shortened.shorturl == deployment.url(f"/{shortened.keyword}")
    assert client.expand(shortened.shorturl) == long_url
    with pytest.raises(yourls.YOURLSURLExistsError) as exists:
        client.shorten(long_url)
    assert exists.value.url.keyword == shortened.keyword

    # This key may not read stats: the client gets YOURLS's refusal.
    with pytest.raises(yourls.YOURLSHTTPError):
        client.url_stats(shortened.shorturl)

    for index in range(3):
        answer = harness.get_fresh(
            deployment.port, f"/{shortened.keyword}", harness.visitor_headers(index)
        )
        assert (answer.status, answer.location) == (302, long_url)
    stored = harness.wait_for_visits(deployment, shortened.keyword, 3, timeout=60)
    assert stored.reached, f"3 clicks not counted: {stored.history}"
    stats_key = _make_key(deployment, f"stats-{secrets.token_hex(3)}", ["stats:read"])
    reader = yourls.YOURLSClient(deployment.url("/yourls-api.php"), signature=stats_key)
    counted = harness.wait_until(
        lambda: reader.url_stats(shortened.shorturl).clicks == 3 or None,
        timeout=60,
        what="the yourls client reading 3 clicks",
    )
    assert counted
