"""A stopped link's fallback (expired_url, issue #28) over HTTP against both deployments: an
expired, a revoked and a capped-out link made over the API with a fallback answer 302 to it from
every server worker instead of the 410 page, and their visits are counted as the links' with the
stats API's "sent to the fallback" saying how many; a link stopped without one still answers the
410 page. The capped link's cap sees only the visit it served."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import harness
from harness import HTTP_TIMEOUT

LEAD = 3.0  # seconds from the create to the expiring link's expiry
CLICKS = 6  # clicks of each stopped link, from fresh connections (every worker gets some)


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _revoke(deployment, code: str) -> None:
    with deployment.api() as api:
        answer = api.delete(deployment.url(f"/api/v1/links/{code}/"), timeout=HTTP_TIMEOUT)
    assert answer.status_code == 204, answer.text[:300]


def _clicks(deployment, code: str, first: int) -> list[tuple[int, str | None]]:
    return [
        (answer.status, answer.location)
        for answer in (
            harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(first + n))
            for n in range(CLICKS)
        )
    ]


def test_expired_revoked_and_capped_out_links_send_visitors_to_their_fallback(deployment):
    fallback = harness.unique_url("fallback")
    expiry = datetime.now(UTC) + timedelta(seconds=LEAD)
    expired_at = time.monotonic() + LEAD
    expiring = harness.create_link(
        deployment,
        harness.unique_url("expiring"),
        expires_at=_stamp(expiry),
        expired_url=fallback,
    )
    assert expiring["expired_url"] == fallback, expiring
    revoked = harness.create_link(deployment, harness.unique_url("revoked"), expired_url=fallback)
    capped_url = harness.unique_url("capped")
    capped = harness.create_link(deployment, capped_url, max_visits=1, expired_url=fallback)
    plain = harness.create_link(deployment, harness.unique_url("plain"), max_visits=1)

    # The capped links' one visit each, served by the links themselves.
    first = harness.get_fresh(deployment.port, f"/{capped['code']}", harness.visitor_headers(0))
    assert (first.status, first.location) == (302, capped_url)
    harness.get_fresh(deployment.port, f"/{plain['code']}", harness.visitor_headers(1))
    _revoke(deployment, revoked["code"])
    time.sleep(max(0.0, expired_at - time.monotonic()) + 0.5)

    for link, start in ((expiring, 10), (revoked, 30), (capped, 50)):
        seen = _clicks(deployment, link["code"], start)
        assert seen == [(302, fallback)] * CLICKS, (link["code"], seen)

    # Without a fallback: the 410 page, as before.
    gone = harness.get_fresh(deployment.port, f"/{plain['code']}", harness.visitor_headers(70))
    assert (gone.status, gone.location) == (410, None)
    assert b"<html" in gone.body.lower()

    # Counted as the links' visits, noted as sent to the fallback; the cap saw only its one.
    for link, total in ((expiring, CLICKS), (revoked, CLICKS), (capped, CLICKS + 1)):
        counted = harness.wait_for_visits(deployment, link["code"], total, timeout=60)
        assert counted.reached, (link["code"], counted)
        shown = harness.stats(deployment, link["code"])
        assert (shown["total_clicks"], shown["sent_to_fallback"]) == (total, CLICKS), shown
    states = {
        link["code"]: [
            entry["state"] for entry in harness.stats(deployment, link["code"])["fallbacks"]
        ]
        for link in (expiring, revoked, capped)
    }
    assert states == {
        expiring["code"]: ["expired"],
        revoked["code"]: ["revoked"],
        capped["code"]: ["limit_reached"],
    }
    detail = harness.api_get(deployment, f"/api/v1/links/{capped['code']}/")
    assert (detail["status"], detail["visits_left"]) == ("limit_reached", 0), detail
