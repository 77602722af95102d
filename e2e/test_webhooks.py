"""Issue #16's webhooks over HTTP against both deployments (embedded: the node's webhooks runner
sends; services: the Celery worker and beat): a webhook added through the API to a receiver this
test runs on loopback (the harness starts the product with SHORTURL_WEBHOOK_ALLOW_PRIVATE=1, as
the issue says tests do) gets `link.created` for a link made through the API and
`link.clicked` for its clicks once they are stored, each body signed with the webhook's secret."""

from __future__ import annotations

import hashlib
import hmac
import json

import harness
import pytest
from harness import HTTP_TIMEOUT


@pytest.fixture
def receiver():
    receiver = harness.WebhookReceiver()
    yield receiver
    receiver.close()


def test_a_webhook_hears_a_new_link_and_its_clicks_signed_with_its_secret(deployment, receiver):
    with deployment.api() as api:
        added = api.post(
            deployment.url("/api/v1/webhooks/"),
            json={"url": receiver.url, "events": ["link.created", "link.clicked"]},
            timeout=HTTP_TIMEOUT,
        )
    assert added.status_code == 201, added.text[:800]
    secret = added.json()["secret"]
    long_url = harness.unique_url("webhook")
    code = harness.create_link(deployment, long_url)["code"]

    def created_events() -> list[dict]:
        return [e for e in receiver.events("link.created") if e["data"]["link"]["code"] == code]

    created = harness.wait_until(
        created_events,
        timeout=60,
        what="the link.created POST",
    )
    assert created[0]["data"]["link"]["long_url"] == long_url
    for headers, body in receiver.received:
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        assert headers["X-Shorturl-Signature"] == expected
        assert headers["X-Shorturl-Delivery"] == json.loads(body)["id"]

    for index in range(3):
        answer = harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(index))
        assert (answer.status, answer.location) == (302, long_url)

    def clicks() -> list[dict] | None:
        seen = [
            click
            for event in receiver.events("link.clicked")
            for click in event["data"]["clicks"]
            if click["code"] == code
        ]
        return seen if len(seen) >= 3 else None

    seen = harness.wait_until(clicks, timeout=90, what="3 clicks in link.clicked POSTs")
    assert len(seen) == 3, seen
    assert not any(click["is_bot"] for click in seen)
