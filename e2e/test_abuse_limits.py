"""Abuse limits as an attacker meets them over HTTP, against the deployment as it is deployed.

Password guessing is locked out, token guessing and floods of made-up codes meet 429 with
Retry-After, and the fast path's answers carry the site's security headers. Every case speaks
from its own client address (X-Forwarded-For, as the one proxy in front would add it:
NUM_PROXIES=1), so what it sets off never touches the other cases' clients.
"""

from __future__ import annotations

import http.client
import re
import secrets
from concurrent.futures import ThreadPoolExecutor

import harness
import requests
from harness import HOST, HTTP_TIMEOUT, WEB_CONCURRENCY

LOGIN_FAILURE_LIMIT = 5  # the default
NOT_FOUND_RATE = 300  # per minute and worker process, the default
ANON_RATE = 60  # per minute, the default
FLOOD = 2000
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _fresh(port: int, path: str, client: str, method: str = "GET") -> http.client.HTTPResponse:
    """One request on a new connection (any worker process may take it), body read."""
    conn = http.client.HTTPConnection(HOST, port, timeout=HTTP_TIMEOUT)
    try:
        conn.request(method, path, headers={"Connection": "close", "X-Forwarded-For": client})
        response = conn.getresponse()
        response.read()
        return response
    finally:
        conn.close()


def _browser(dep: harness.Deployment, client: str) -> requests.Session:
    sess = dep.session()
    sess.headers["X-Forwarded-For"] = client
    return sess


def _sign_in(dep: harness.Deployment, sess: requests.Session, path: str, user: str, pw: str):
    page = sess.get(dep.url(path), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, f"GET {path} → {page.status_code}"
    return harness.post_form(dep, sess, path, page.text, {"username": user, "password": pw})


def test_password_guessing_is_locked_out_for_that_address_only(deployment):
    """Past the limit the right password is refused with a page saying so, at the marketers'
    sign-in and the admin's; the same account from another address still gets in."""
    doors = (("/accounts/login/", "demo", "demo"), ("/admin/login/", "admin", "admin"))
    for path, user, password in doors:
        attacker = _browser(deployment, f"203.0.113.{secrets.randbelow(200) + 1}")
        answers = [
            _sign_in(deployment, attacker, path, user, f"guess-{n}").status_code
            for n in range(LOGIN_FAILURE_LIMIT)
        ]
        assert answers == [200] * (LOGIN_FAILURE_LIMIT - 1) + [429], f"{path}: {answers}"

        refused = _sign_in(deployment, attacker, path, user, password)
        assert refused.status_code == 429, (
            f"{path}: the right password after {LOGIN_FAILURE_LIMIT} wrong ones → "
            f"{refused.status_code}, expected 429: {refused.text[:300]}"
        )
        assert "Too many failed sign-ins" in refused.text
        assert int(refused.headers["Retry-After"]) > 0
        assert "sessionid" not in attacker.cookies

        owner = _browser(deployment, f"198.51.100.{secrets.randbelow(200) + 1}")
        assert _sign_in(deployment, owner, path, user, password).status_code == 302, (
            f"{path}: {user} from another address was locked out too"
        )


def test_wrong_tokens_meet_the_anonymous_rate(deployment):
    guesser = _browser(deployment, f"192.0.2.{secrets.randbelow(200) + 1}")
    guesser.headers["Authorization"] = f"Token {secrets.token_hex(20)}"
    statuses = [
        guesser.get(deployment.url("/api/v1/links/"), timeout=HTTP_TIMEOUT)
        for _ in range(ANON_RATE + 5)
    ]
    codes = [response.status_code for response in statuses]
    assert set(codes) <= {401, 429} and 429 in codes, f"statuses: {sorted(set(codes))}"
    assert codes.index(429) <= ANON_RATE, f"the first 429 came after {codes.index(429)} × 401"
    assert int(statuses[-1].headers["Retry-After"]) > 0


def test_a_flood_of_made_up_codes_meets_429_and_real_links_still_redirect(deployment):
    link = harness.create_link(deployment, harness.unique_url("flood"))
    client = f"198.18.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"
    run = secrets.token_hex(4)

    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(lambda n: _fresh(deployment.port, f"/nope-{run}-{n}", client), range(FLOOD))
        )
    counted = {status: sum(a.status == status for a in answers) for status in (404, 429)}
    harness.note(deployment, "404 flood", f"{FLOOD} made-up codes from one address: {counted}")
    assert counted[404] + counted[429] == FLOOD, counted
    assert counted[429] > 0, f"{FLOOD} made-up codes from one address, never a 429: {counted}"
    # Per process and window; a window may turn once during the flood.
    assert counted[404] <= 2 * NOT_FOUND_RATE * WEB_CONCURRENCY, counted
    throttled = next(a for a in answers if a.status == 429)
    assert 0 < int(throttled.getheader("Retry-After")) <= 60
    assert "text/html" in throttled.getheader("Content-Type")

    for _ in range(2 * WEB_CONCURRENCY):
        hit = _fresh(deployment.port, f"/{link['code']}", client)
        assert hit.status == 302, f"a real link from the flooding address → {hit.status}"


def test_the_fast_paths_answers_carry_the_security_headers(deployment):
    link = harness.create_link(deployment, harness.unique_url("headers"))
    gone = harness.create_link(deployment, harness.unique_url("headers-gone"))
    with deployment.api() as api:
        revoked = api.delete(deployment.url(f"/api/v1/links/{gone['code']}/"), timeout=30)
    assert revoked.status_code == 204
    client = f"192.0.2.{secrets.randbelow(200) + 1}"

    for path, status in ((f"/{gone['code']}", 410), ("/zzzzzzz", 404)):
        for method in ("GET", "HEAD"):
            answer = _fresh(deployment.port, path, client, method)
            assert answer.status == status, f"{method} {path} → {answer.status}"
            found = {name: answer.getheader(name) for name in SECURITY_HEADERS}
            assert found == SECURITY_HEADERS, f"{method} {path}: {found}"
    # A redirect is not a page: nosniff, and no Referrer-Policy, which the browser would apply
    # to the destination and so strip the visitor's referrer from its analytics.
    for method in ("GET", "HEAD"):
        answer = _fresh(deployment.port, f"/{link['code']}", client, method)
        assert answer.status == 302, f"{method} → {answer.status}"
        assert answer.getheader("X-Content-Type-Options") == "nosniff"
        assert answer.getheader("Referrer-Policy") is None
    with deployment.session() as sess:
        page = sess.get(deployment.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
    assert {name: page.headers.get(name) for name in SECURITY_HEADERS} == SECURITY_HEADERS
    assert re.search(r"<h1>\s*Log in", page.text)
