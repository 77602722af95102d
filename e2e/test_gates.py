"""Issue #15's gates over HTTP against both deployments: a password-protected link (its unlock
page, the form a browser POSTs with its CSRF cookie and token, the `X-Link-Password` header an
API client sends) and a visit cap that lets exactly `max_visits` people through however many
click at once (embedded: several worker processes on one SQLite file; services: MariaDB, Redis
and a separate Celery worker), with bots using no visit and not sent on."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import harness
import redis
from harness import HTTP_TIMEOUT

PASSWORD = "open sesame"  # noqa: S105 - the test link's password
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def _person(ip: str) -> dict[str, str]:
    """One visitor: a browser's User-Agent from its own public address (the harness's server
    trusts one proxy, so X-Forwarded-For is the client's address)."""
    return {"X-Forwarded-For": ip, "User-Agent": harness.BROWSER_USER_AGENTS[0]}


def _link(dep: harness.Deployment, code: str) -> dict:
    with dep.api() as api:
        response = api.get(dep.url(f"/api/v1/links/{code}/"), timeout=HTTP_TIMEOUT)
    assert response.status_code == 200, response.text[:500]
    return response.json()


def test_a_password_link_unlocks_by_form_or_header_and_counts_only_the_unlocked(deployment):
    long_url = harness.unique_url("gates-password")
    link = harness.create_link(deployment, long_url, password=PASSWORD)
    code = link["code"]
    assert link["password_protected"] is True and "password" not in link, link

    # A browser: the unlock page (200, not indexed, nothing counted), then the form.
    browser = deployment.session()
    browser.headers.update(_person("81.2.69.40"))
    page = browser.get(deployment.url(f"/{code}"), allow_redirects=False, timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, f"GET /{code} → {page.status_code}: {page.text[:300]}"
    assert "This link is password-protected" in page.text
    assert 'name="robots" content="noindex' in page.text
    assert page.headers.get("X-Robots-Tag", "").startswith("noindex")
    assert "csrftoken" in browser.cookies, "the unlock page must set the CSRF cookie its form needs"
    assert long_url not in page.text, "the page must not give the destination away"

    wrong = harness.post_form(deployment, browser, f"/{code}", page.text, {"password": "nope!"})
    assert wrong.status_code == 400, f"a wrong password → {wrong.status_code}: {wrong.text[:300]}"
    assert "That password is not right" in wrong.text
    assert long_url not in wrong.text

    right = harness.post_form(deployment, browser, f"/{code}", wrong.text, {"password": PASSWORD})
    assert (right.status_code, right.headers.get("Location")) == (303, long_url), (
        f"the right password → {right.status_code} {right.headers.get('Location')}: "
        f"{right.text[:300]}"
    )

    # The same POST without the CSRF token, as a cross-site form would send it: refused.
    forged = deployment.session().post(
        deployment.url(f"/{code}"),
        data={"password": PASSWORD},
        allow_redirects=False,
        timeout=HTTP_TIMEOUT,
    )
    assert forged.status_code == 403, f"no CSRF token → {forged.status_code}"

    # An API client: the header on GET (the link's own redirect), a wrong one refused.
    client = _person("81.2.69.41")
    header_right = harness.get_fresh(
        deployment.port, f"/{code}", {**client, "X-Link-Password": PASSWORD}
    )
    assert (header_right.status, header_right.location) == (302, long_url)
    header_wrong = harness.get_fresh(
        deployment.port, f"/{code}", {**client, "X-Link-Password": "not it"}
    )
    assert header_wrong.status == 403, header_wrong.body[:300]
    assert header_wrong.location is None

    # Two clicks went through (the form's and the header's); the pages and refusals count nothing.
    seen = harness.wait_for_visits(deployment, code, 2, timeout=40)
    assert seen.reached, f"stored {seen.stored} of 2: {seen.history}"
    # Let any stray visit (one that should not have been counted) land before reading again.
    harness.wait_for_visits(deployment, code, 3, timeout=6)
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["bot_clicks"]) == (2, 0), stats


def test_a_capped_link_lets_exactly_max_visits_people_through_a_crowd(deployment):
    long_url = harness.unique_url("gates-cap")
    link = harness.create_link(deployment, long_url, max_visits=10)
    code = link["code"]
    assert (link["max_visits"], link["visits_left"]) == (10, 10), link

    def click(i: int) -> harness.Answer:
        return harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(i))

    with ThreadPoolExecutor(100) as pool:
        answers = list(pool.map(click, range(100)))
    statuses = Counter(a.status for a in answers)
    assert statuses == {302: 10, 410: 90}, f"100 people at once on a cap of 10: {statuses}"
    assert all(a.location == long_url for a in answers if a.status == 302)
    refused = next(a for a in answers if a.status == 410)
    assert b"reached its limit" in refused.body, refused.body[:300]

    assert _link(deployment, code)["visits_left"] == 0
    seen = harness.wait_for_visits(deployment, code, 10, timeout=40)
    assert seen.reached, f"stored {seen.stored} of 10: {seen.history}"
    harness.wait_for_visits(deployment, code, 11, timeout=6)  # any visit too many lands meanwhile
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["bot_clicks"]) == (10, 0), stats
    harness.note(deployment, "cap of 10, 100 clicks at once", f"{dict(statuses)}")


def test_bots_use_no_visit_of_a_capped_link_and_are_not_sent_on(deployment):
    long_url = harness.unique_url("gates-cap-bot")
    code = harness.create_link(deployment, long_url, max_visits=2)["code"]
    bot = {"User-Agent": GOOGLEBOT, "X-Forwarded-For": "66.249.66.1"}

    crawled = harness.get_fresh(deployment.port, f"/{code}", bot)
    assert (crawled.status, crawled.location) == (403, None)  # security round 3, finding 10
    assert _link(deployment, code)["visits_left"] == 2, "a bot used up a visit"

    people = [
        harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(i))
        for i in (1, 2, 3)
    ]
    assert [p.status for p in people] == [302, 302, 410]
    assert _link(deployment, code)["visits_left"] == 0
    assert harness.get_fresh(deployment.port, f"/{code}", bot).status == 410

    seen = harness.wait_for_visits(deployment, code, 2, timeout=40)
    assert seen.reached, f"stored {seen.stored} of 2: {seen.history}"
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["bot_clicks"]) == (2, 0), stats


# links/visit_caps.py: how often each node saves its counters to the link rows.
VISIT_CAPS_SAVE_SECONDS = 2.0


def _lose_visit_cap_counters(dep: harness.Deployment) -> int:
    """What a Redis restart without persistence, or a node's lost state dir, does to the caps'
    counters (every counter of the deployment goes). Returns how many went."""
    if dep.mode == "services":
        client = redis.Redis(host=harness.HOST, port=urlsplit(dep.env["REDIS_URL"]).port)
        with client:
            keys = list(client.scan_iter("shorturl:{caps}:*"))
            return client.delete(*keys) if keys else 0
    state_dir = Path(dep.env["DATABASE_URL"].removeprefix("sqlite:///") + "-state")
    counters = list((state_dir / "visit-caps").glob("*"))
    for counter in counters:
        counter.unlink()
    return len(counters)


def test_a_cap_s_used_visits_outlive_a_restart_that_loses_its_counters(deployment):
    """Three people use three of five visits; every counter is lost and the web server
    restarts: the link row holds the count the node's runner saved meanwhile, so exactly two
    more people get in."""
    code = harness.create_link(deployment, harness.unique_url("gates-cap-restart"), max_visits=5)[
        "code"
    ]
    used = [
        harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(i)).status
        for i in range(3)
    ]
    assert used == [302, 302, 302]
    time.sleep(VISIT_CAPS_SAVE_SECONDS * 2 + 1)  # the node's runner saves its counters meanwhile

    lost = _lose_visit_cap_counters(deployment)
    assert lost >= 1, "no counter was found to lose: the cap was not counted where it should be"
    harness.restart_web(deployment)
    assert _link(deployment, code)["visits_left"] == 2

    after = [
        harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(i)).status
        for i in range(3, 8)
    ]
    assert after == [302, 302, 410, 410, 410], after
    harness.note(deployment, "cap of 5 across a restart that lost its counters", f"{used + after}")
