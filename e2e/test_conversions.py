"""Conversions (issue #29) over HTTP against both deployments, as a shop's server reports them.

A click on a link that tracks conversions is sent on with its click id (`sc_cid`); a lead
reported with it at once (before the runner or the worker has stored the visit), then two sales
of which one repeats the other's invoice id: the link's stats answer and its stats page show
1 click, 1 lead, 1 sale and its revenue. 200 clicks and their 200 leads reported at once from
16 clients (50 of them twice) are 200 leads, every repeat answered as one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

CLICK_ID = "sc_cid"
CLICKS = 200


def _click_id(answer: harness.Answer) -> str:
    assert answer.status == 302, answer
    return parse_qs(urlsplit(answer.location).query)[CLICK_ID][0]


def _post(dep: harness.Deployment, path: str, body: dict):
    with dep.api() as api:
        return api.post(dep.url(path), json=body, timeout=HTTP_TIMEOUT)


def test_a_click_a_lead_and_two_sales_show_in_the_api_and_the_page(deployment):
    long_url = harness.unique_url("conversions")
    made = harness.create_link(deployment, long_url, track_conversions=True)
    assert made["track_conversions"] is True, made
    code = made["code"]
    answer = get_fresh(deployment.port, f"/{code}", visitor_headers(3))
    assert answer.location.startswith(long_url + "&sc_cid="), answer
    click_id = _click_id(answer)

    # At once: the visit may still be in the spool or the Redis buffer.
    lead = _post(
        deployment,
        "/api/v1/track/lead",
        {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_e2e"},
    )
    assert lead.status_code == 201, lead.text[:500]
    assert lead.json()["code"] == code
    sale = {"click_id": click_id, "amount": 4990, "currency": "EUR", "event_name": "Purchase"}
    first = _post(deployment, "/api/v1/track/sale", {**sale, "invoice_id": "INV-E2E-1"})
    again = _post(deployment, "/api/v1/track/sale", {**sale, "invoice_id": "INV-E2E-1"})
    assert (first.status_code, again.status_code) == (201, 200), (first.text, again.text)
    assert again.json()["duplicate"] is True
    unknown = _post(
        deployment,
        "/api/v1/track/lead",
        {"click_id": "f" * 32, "event_name": "Sign up", "customer_id": "cus_e2e"},
    )
    assert unknown.status_code == 404
    assert "No click has the id" in unknown.json()["detail"]

    assert harness.wait_for_visits(deployment, code, 1, timeout=30).reached
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["leads"], stats["sales"]) == (1, 1, 1), stats
    assert (stats["revenue"], stats["currency"]) == (4990, "EUR"), stats

    sess = harness.login(deployment, "demo", "demo")
    page = sess.get(deployment.url(f"/dashboard/links/{code}/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200
    for shown in (
        'data-testid="funnel-clicks">1<',
        'data-testid="funnel-leads">1<',
        'data-testid="funnel-sales">1<',
        'data-testid="funnel-revenue">49.90 EUR<',
    ):
        assert shown in page.text, shown


def test_two_hundred_leads_at_once_on_two_hundred_clicks_count_once(deployment):
    long_url = harness.unique_url("conversions-burst")
    code = harness.create_link(deployment, long_url, track_conversions=True)["code"]
    click_ids = [_click_id(answer) for answer in harness.burst(deployment, code, CLICKS)]
    assert len(set(click_ids)) == CLICKS
    assert harness.wait_for_visits(deployment, code, CLICKS, timeout=60).reached
    reports = [(n, click_id) for n, click_id in enumerate(click_ids)]
    reports += reports[:50]  # a retrying shop: 50 of them twice

    def report(item: tuple[int, str]) -> int:
        n, click_id = item
        body = {"click_id": click_id, "event_name": "Sign up", "customer_id": f"cus_{n}"}
        return _post(deployment, "/api/v1/track/lead", body).status_code

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(report, reports))
    assert statuses.count(201) == CLICKS, sorted(set(statuses))
    assert statuses.count(200) == 50
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["leads"], stats["sales"]) == (CLICKS, CLICKS, 0)
    assert stats["lead_rate"] == 100.0
