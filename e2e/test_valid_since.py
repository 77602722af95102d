"""A link's start (valid_since, issue #27) over HTTP against both deployments: a link made over the
API to start a few seconds ahead answers its visitors "not live yet" (404, never cached, counted
nowhere) from every server worker, then, once the start has passed and with no edit, the
redirect from every worker (their cached entries go live by themselves), each of those visits
counted and none of the earlier ones.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import harness
from harness import HTTP_TIMEOUT

LEAD = 3.0  # seconds from the create to the link's start
AFTER = 24  # clicks once live, from as many fresh connections (every worker gets some)


def test_a_link_goes_live_at_its_start_by_itself(deployment):
    long_url = harness.unique_url("valid-since")
    start = datetime.now(UTC) + timedelta(seconds=LEAD)
    started_at = time.monotonic() + LEAD  # the same moment on this machine's clock
    made = harness.create_link(
        deployment, long_url, valid_since=start.isoformat().replace("+00:00", "Z")
    )
    code = made["code"]
    assert (made["status"], made["is_active"]) == ("scheduled", False), made

    # Before the start: the page, from fresh connections (any worker), each one caching it.
    before = 0
    with deployment.session() as browser:
        page = browser.get(
            deployment.url(f"/{code}"),
            headers=harness.visitor_headers(0),
            allow_redirects=False,
            timeout=HTTP_TIMEOUT,
        )
    assert page.status_code == 404, f"/{code} before its start → {page.status_code}"
    assert page.headers.get("Cache-Control") == "private, max-age=0", dict(page.headers)
    assert "not live yet" in page.text and "Location" not in page.headers
    before += 1
    while time.monotonic() < started_at - 0.8 and before < 40:
        answer = harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(before))
        assert (answer.status, answer.location) == (404, None), (before, answer)
        assert b"not live yet" in answer.body
        before += 1
    assert before > 1, "the create took the whole lead: no click landed before the start"
    listed = harness.api_get(deployment, "/api/v1/links/", status="scheduled", page_size=500)
    assert code in {item["code"] for item in listed["results"]}

    # The start passes; nobody touches the link.
    time.sleep(max(0.0, started_at - time.monotonic()) + 0.5)
    answers = harness.burst(deployment, code, count=AFTER, clients=8)
    wrong = [(a.status, a.location) for a in answers if (a.status, a.location) != (302, long_url)]
    assert not wrong, f"after the start: {wrong[:5]}"
    shown = harness.api_get(deployment, f"/api/v1/links/{code}/")
    assert (shown["status"], shown["is_active"]) == ("active", True), shown

    counted = harness.wait_for_visits(deployment, code, AFTER, timeout=60)
    assert counted.reached, f"visits after the start never stored: {counted}"
    time.sleep(3)  # a late visit from before the start would land by now
    assert harness.stats(deployment, code)["total_clicks"] == AFTER, (
        f"{before} clicks before the start must count nowhere, {AFTER} after it once each"
    )
