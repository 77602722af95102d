"""Issue #30's per-key limits over HTTP against both deployments, each running several server
processes: a key made on the keys page with 10 requests a minute gets 10 answers, its
RateLimit-Remaining falling 9 … 0, then 429 with Retry-After, whichever process answers (every
request on a new connection) and whichever API it calls (the Shlink layer shares the budget);
and 30 requests sent at once with another such key are answered exactly 10 times."""

from __future__ import annotations

import http.client
import re
import secrets
import time
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import HOST, HTTP_TIMEOUT

LIMIT = 10


def _make_limited_key(dep: harness.Deployment, rate_limit: int) -> str:
    """A key made on /accounts/api-keys/ by the demo marketer with a limit, as a browser does."""
    browser = harness.login(dep, "demo", "demo")
    page = browser.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, page.text[:500]
    made = harness.post_form(
        dep,
        browser,
        "/accounts/api-keys/",
        page.text,
        {
            "name": f"limited-{secrets.token_hex(3)}",
            "scopes": ["links:read"],
            "rate_limit": str(rate_limit),
        },
    )
    assert made.status_code == 302, f"making a key → {made.status_code}: {made.text[:800]}"
    shown = browser.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT).text
    key = re.search(r'data-testid="new-key">([^<]+)<', shown)
    assert key, f"the new key is not on the page: {shown[:1500]}"
    return key.group(1).strip()


def _get(port: int, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
    """One GET on a new connection (any server process may take it), body read."""
    conn = http.client.HTTPConnection(HOST, port, timeout=HTTP_TIMEOUT)
    try:
        conn.request("GET", path, headers={"Connection": "close", **headers})
        response = conn.getresponse()
        response.read()
        return response
    finally:
        conn.close()


def _start_of_a_minute() -> None:
    """The counts run per clock minute: start early in one, so the test ends in it."""
    into = time.time() % 60
    if into > 40:
        time.sleep(60.5 - into)


def test_a_key_limited_to_10_a_minute_gets_10_answers_then_429(deployment):
    key = _make_limited_key(deployment, LIMIT)
    native = {"Authorization": f"Token {key}"}
    _start_of_a_minute()

    answers = [_get(deployment.port, "/api/v1/links/", native) for _ in range(LIMIT - 1)]
    # The Shlink layer counts against the same key's budget: its 10th request.
    answers.append(_get(deployment.port, "/rest/v3/short-urls", {"X-Api-Key": key}))
    refused = _get(deployment.port, "/api/v1/links/", native)

    assert [a.status for a in answers] == [200] * LIMIT, [a.status for a in answers]
    assert [a.getheader("RateLimit-Limit") for a in answers] == [str(LIMIT)] * LIMIT
    assert [int(a.getheader("RateLimit-Remaining")) for a in answers] == list(
        range(LIMIT - 1, -1, -1)
    )
    assert all(1 <= int(a.getheader("RateLimit-Reset")) <= 60 for a in answers)
    assert refused.status == 429
    assert 1 <= int(refused.getheader("Retry-After")) <= 60
    assert refused.getheader("RateLimit-Remaining") == "0"
    shlink_refused = _get(deployment.port, "/rest/v3/short-urls", {"X-Api-Key": key})
    assert shlink_refused.status == 429 and shlink_refused.getheader("Retry-After")


def test_requests_sent_at_once_are_answered_exactly_the_limit(deployment):
    """Several processes count one key together: never more than its limit get through."""
    key = _make_limited_key(deployment, LIMIT)
    _start_of_a_minute()
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(
                lambda _: _get(
                    deployment.port, "/api/v1/links/", {"Authorization": f"Token {key}"}
                ),
                range(3 * LIMIT),
            )
        )
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] * LIMIT + [429] * (2 * LIMIT), statuses
    remaining = sorted(int(a.getheader("RateLimit-Remaining")) for a in answers if a.status == 200)
    assert remaining == list(range(LIMIT)), remaining
