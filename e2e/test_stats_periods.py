"""The stats API's shares, "other" and buckets over HTTP against both deployments (issue #14):
each entry's share is of the range's clicks with the rest summed in `other`, `?limit=all` lists
every entry, `?bucket=day` counts a returning visitor once that day and a new one as soon as
the stats have their click, and a year of hours is a 400 naming `start`."""

from __future__ import annotations

import time

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

STATS_POLL_SECONDS = 40.0
# Visitors 0–8 once each, then visitor 0 twice more: 11 clicks, 9 people, several browsers.
VISITORS = [*range(9), 0, 0]


def _stats(dep: harness.Deployment, code: str, **params) -> tuple[int, dict]:
    with dep.api() as api:
        response = api.get(dep.url(f"/api/v1/links/{code}/stats/"), params=params, timeout=30)
    return response.status_code, response.json()


def test_shares_other_every_entry_and_day_buckets(deployment):
    long_url = harness.unique_url("stats-periods")
    code = harness.create_link(deployment, long_url)["code"]
    for index in VISITORS:
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert (answer.status, answer.location) == (302, long_url), answer
    deadline = time.monotonic() + STATS_POLL_SECONDS
    while True:
        status, body = _stats(deployment, code, limit="all")
        if status == 200 and body["total_clicks"] == len(VISITORS):
            break
        assert time.monotonic() < deadline, f"stats never showed the clicks: {status} {body}"
        time.sleep(1)

    every = body["browsers"]
    assert body["other"]["browsers"]["clicks"] == 0
    assert sum(entry["clicks"] for entry in every) == len(VISITORS)
    assert abs(sum(entry["share"] for entry in every) - 100) < 0.5, every

    status, top = _stats(deployment, code, limit=1)
    assert status == 200
    first, other = top["browsers"][0], top["other"]["browsers"]
    assert first["share"] == round(100 * first["clicks"] / len(VISITORS), 1), top["browsers"]
    assert other == {
        "clicks": len(VISITORS) - first["clicks"],
        "values": len(every) - 1,
        "share": round(100 * (len(VISITORS) - first["clicks"]) / len(VISITORS), 1),
    }

    status, daily = _stats(deployment, code, bucket="day")
    assert status == 200 and daily["bucket"] == "day", daily
    clicked = [point for point in daily["series"] if point["clicks"]]
    assert sum(point["clicks"] for point in clicked) == len(VISITORS)
    if len(clicked) == 1:  # (the clicks did not straddle midnight)
        assert clicked[0]["unique_visitors"] == daily["unique_visitors"] == len(set(VISITORS))

    # A new person later the same day: the day's people follow once the roll-up has the visit
    # (what is cached is only days that are over).
    newcomer = get_fresh(deployment.port, f"/{code}", visitor_headers(len(set(VISITORS))))
    assert newcomer.status == 302, newcomer
    deadline = time.monotonic() + STATS_POLL_SECONDS
    while True:
        status, daily = _stats(deployment, code, bucket="day")
        if status == 200 and daily["total_clicks"] == len(VISITORS) + 1:
            break
        assert time.monotonic() < deadline, f"stats never showed the new click: {status} {daily}"
        time.sleep(1)
    clicked = [point for point in daily["series"] if point["clicks"]]
    if len(clicked) == 1:
        people = len(set(VISITORS)) + 1
        assert clicked[0]["unique_visitors"] == daily["unique_visitors"] == people, clicked

    with deployment.api() as api:
        too_long = api.get(
            deployment.url(f"/api/v1/links/{code}/stats/"),
            params={"start": "2024-01-01T00:00:00Z", "end": "2025-06-01T00:00:00Z"},
            timeout=HTTP_TIMEOUT,
        )
        weekly = api.get(
            deployment.url(f"/api/v1/links/{code}/stats/"),
            params={
                "start": "2024-01-01T00:00:00Z",
                "end": "2025-06-01T00:00:00Z",
                "bucket": "auto",
            },
            timeout=HTTP_TIMEOUT,
        )
    assert too_long.status_code == 400 and list(too_long.json()) == ["start"], too_long.text
    assert weekly.status_code == 200 and weekly.json()["bucket"] == "week", weekly.text[:300]
