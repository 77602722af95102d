"""Webhook deliveries as a receiver sees them: signed JSON bodies for link events and batched
clicks, retried with backoff on errors and timeouts, given up after the last attempt."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from analytics import services as analytics_services
from analytics.tests.visits import visit_message
from links.services.bulk import link_create_many
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from webhooks import sending, services
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db

ALL_EVENTS = ["link.created", "link.updated", "link.revoked", "link.clicked"]


def _webhook(user, receiver, events=ALL_EVENTS) -> Webhook:
    return services.webhook_create(user=user, url=receiver.url, events=events)


def _bodies(receiver) -> list[dict]:
    return [json.loads(item.body) for item in receiver.received]


def _make_due() -> None:
    """As if the retry delays had passed."""
    WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def test_a_created_link_reaches_the_receiver_signed_with_the_webhooks_secret(
    user, receiver, django_capture_on_commit_callbacks
):
    webhook = _webhook(user, receiver)
    with django_capture_on_commit_callbacks(execute=True):
        link = link_create(user=user, long_url="https://example.com/spring", title="Spring").link

    assert services.webhook_deliver_due() == 1
    [got] = receiver.received
    expected = "sha256=" + hmac.new(webhook.secret.encode(), got.body, hashlib.sha256).hexdigest()
    assert got.headers["X-Shorturl-Signature"] == expected
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Shorturl-Event"] == "link.created"
    body = json.loads(got.body)
    assert got.headers["X-Shorturl-Delivery"] == body["id"]
    assert body["event"] == "link.created"
    assert body["created_at"].endswith("Z")
    assert body["data"]["link"]["code"] == link.code
    assert body["data"]["link"]["long_url"] == "https://example.com/spring"
    assert body["data"]["link"]["title"] == "Spring"
    assert body["data"]["link"]["id"] == link.pk
    delivery = WebhookDelivery.objects.get()
    assert str(delivery.event_id) == body["id"]
    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert (delivery.attempts, delivery.response_status, delivery.response_excerpt) == (
        1,
        200,
        "ok",
    )


def test_a_signature_made_with_another_secret_does_not_match(user, receiver):
    _webhook(user, receiver)
    body = sending.body_bytes({"id": "x", "event": "ping"})
    assert sending.signature("right", body) != sending.signature("wrong", body)
    assert sending.signature("right", body) != sending.signature("right", body + b" ")


def test_update_and_revoke_are_told_with_the_links_new_state(
    user, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        link = link_create(user=user, long_url="https://example.com/a").link
    _webhook(user, receiver, events=["link.updated", "link.revoked"])
    with django_capture_on_commit_callbacks(execute=True):
        link_update(
            code=link.code, user=user, long_url="https://example.com/b", ios_url="shop://p/7"
        )
    with django_capture_on_commit_callbacks(execute=True):
        link_revoke(code=link.code, user=user)
    with django_capture_on_commit_callbacks(execute=True):
        link_revoke(code=link.code, user=user)  # already revoked: nothing new to tell

    assert services.webhook_deliver_due() == 2
    updated, revoked = sorted(_bodies(receiver), key=lambda body: body["event"], reverse=True)
    assert updated["event"] == "link.updated"
    assert updated["data"]["link"]["long_url"] == "https://example.com/b"
    assert updated["data"]["link"]["revoked_at"] is None
    # App deep links (issue #28): the one set, the other None.
    assert (updated["data"]["link"]["ios_url"], updated["data"]["link"]["android_url"]) == (
        "shop://p/7",
        None,
    )
    assert revoked["event"] == "link.revoked"
    assert revoked["data"]["link"]["revoked_at"] is not None
    assert updated["id"] != revoked["id"]


def test_events_the_webhook_did_not_choose_and_other_peoples_links_are_not_sent(
    user, other_user, receiver, django_capture_on_commit_callbacks
):
    _webhook(user, receiver, events=["link.revoked"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/mine")
        theirs = link_create(user=other_user, long_url="https://example.com/theirs").link
        link_revoke(code=theirs.code, user=other_user)
    assert WebhookDelivery.objects.count() == 0


def test_bulk_creates_tell_each_new_link(user, receiver, django_capture_on_commit_callbacks):
    _webhook(user, receiver, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create_many(
            user=user,
            items=[{"long_url": f"https://example.com/{n}"} for n in range(3)],
        )
    services.webhook_deliver_due()
    urls = sorted(body["data"]["link"]["long_url"] for body in _bodies(receiver))
    assert urls == [f"https://example.com/{n}" for n in range(3)]


def test_many_visits_stored_in_one_flush_make_one_post_with_every_click(
    user, other_user, receiver, django_capture_on_commit_callbacks
):
    first = link_create(user=user, long_url="https://example.com/one").link
    second = link_create(user=user, long_url="https://example.com/two").link
    theirs = link_create(user=other_user, long_url="https://example.com/three").link
    _webhook(user, receiver, events=["link.clicked"])
    messages = [visit_message(first, referrer="https://news.example/") for _ in range(5)]
    messages += [visit_message(second) for _ in range(3)]
    messages += [visit_message(theirs) for _ in range(2)]
    with django_capture_on_commit_callbacks(execute=True):
        assert analytics_services.store_visits(messages=messages) == 10

    assert services.webhook_deliver_due() == 1
    [body] = _bodies(receiver)
    assert body["event"] == "link.clicked"
    clicks = body["data"]["clicks"]
    assert len(clicks) == 8  # the other person's clicks are not theirs to hear
    assert {click["code"] for click in clicks} == {first.code, second.code}
    click = next(click for click in clicks if click["code"] == first.code)
    assert click["link_id"] == first.pk
    assert click["referrer"] == "https://news.example/"
    assert click["is_bot"] is False
    assert click["device_type"] == "PC"
    assert click["visit_time"].endswith("Z")
    assert {"country", "country_code"} <= click.keys()


def test_visits_stored_again_are_not_told_twice(user, receiver, django_capture_on_commit_callbacks):
    link = link_create(user=user, long_url="https://example.com/once").link
    _webhook(user, receiver, events=["link.clicked"])
    message = visit_message(link)
    with django_capture_on_commit_callbacks(execute=True):
        analytics_services.store_visits(messages=[message])
    with django_capture_on_commit_callbacks(execute=True):
        analytics_services.store_visits(messages=[message])  # a batch taken again
    assert WebhookDelivery.objects.count() == 1


def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    user, receiver, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_ATTEMPT_SECONDS = 0.3
    receiver.answers = [(500, "boom", 0.0), (200, "late", 1.0), (200, "thanks", 0.0)]
    _webhook(user, receiver, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/retry")

    before = timezone.now()
    assert services.webhook_deliver_due() == 1
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("pending", 1, 500)
    assert delivery.response_excerpt == "boom"
    assert timedelta(seconds=9) < delivery.next_attempt_at - before < timedelta(seconds=12)
    assert services.webhook_deliver_due() == 0  # not due yet

    _make_due()
    before = timezone.now()
    assert services.webhook_deliver_due() == 1  # the receiver is too slow: a timeout
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("pending", 2, None)
    assert "No complete answer within 0.3 s" in delivery.error
    assert timedelta(seconds=59) < delivery.next_attempt_at - before < timedelta(seconds=62)

    _make_due()
    assert services.webhook_deliver_due() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_status) == (
        "succeeded",
        3,
        200,
    )
    assert delivery.next_attempt_at is None
    ids = {item.headers["X-Shorturl-Delivery"] for item in receiver.received}
    assert len(receiver.received) == 3 and ids == {str(delivery.event_id)}  # one event id


def test_a_delivery_is_given_up_after_the_last_attempt(
    user, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [(503, "down", 0.0)]
    _webhook(user, receiver, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/never")
    delays = []
    for _ in range(services.MAX_ATTEMPTS):
        _make_due()
        before = timezone.now()
        assert services.webhook_deliver_due() == 1
        delivery = WebhookDelivery.objects.get()
        if delivery.next_attempt_at:
            delays.append(round((delivery.next_attempt_at - before).total_seconds()))
    assert delays == [10, 60, 300, 1800, 7200]
    assert (delivery.status, delivery.attempts) == ("failed", services.MAX_ATTEMPTS)
    assert delivery.next_attempt_at is None
    _make_due()
    assert services.webhook_deliver_due() == 0
    assert len(receiver.received) == services.MAX_ATTEMPTS


def test_a_test_ping_is_queued_due_at_once(user, receiver):
    webhook = _webhook(user, receiver, events=["link.created"])
    delivery = services.webhook_send_test(user=user, webhook_id=webhook.pk)
    assert (delivery.status, delivery.attempts) == ("pending", 0)
    assert receiver.received == []
    assert services.webhook_deliver_due() == 1
    [body] = _bodies(receiver)
    assert body["event"] == "ping"
    assert body["data"]["webhook"]["id"] == webhook.pk


def test_only_the_last_deliveries_are_kept(user, receiver, monkeypatch):
    monkeypatch.setattr(services, "KEEP_DELIVERIES", 3)
    webhook = _webhook(user, receiver, events=["link.created"])
    for _ in range(5):
        services.webhook_send_test(user=user, webhook_id=webhook.pk)
        services.webhook_deliver_due()
    assert WebhookDelivery.objects.filter(webhook=webhook).count() == 3


def test_a_paused_webhook_hears_nothing(user, receiver, django_capture_on_commit_callbacks):
    webhook = _webhook(user, receiver, events=["link.created"])
    services.webhook_update(user=user, webhook_id=webhook.pk, is_active=False)
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/quiet")
    assert WebhookDelivery.objects.count() == 0


def test_a_change_that_changes_nothing_tells_nothing(
    user, receiver, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url="https://example.com/same").link
    _webhook(user, receiver, events=["link.updated"])
    with django_capture_on_commit_callbacks(execute=True):
        link_update(code=link.code, user=user)
    assert WebhookDelivery.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        link_update(code=link.code, user=user, archived=True)
    assert WebhookDelivery.objects.get().event == "link.updated"


def test_a_webhook_deleted_during_an_attempt_is_no_error(user, receiver, monkeypatch):
    webhook = _webhook(user, receiver, events=["link.created"])
    real_post = sending.post

    def post_then_delete(**kwargs):
        result = real_post(**kwargs)
        services.webhook_delete(user=user, webhook_id=webhook.pk)
        return result

    monkeypatch.setattr(sending, "post", post_then_delete)
    delivery = services._new_delivery(webhook, "ping", {}, timezone.now())
    delivery.save()
    assert services.webhook_delivery_attempt(delivery_id=delivery.pk) is True
    assert not WebhookDelivery.objects.exists()


def test_an_address_that_refuses_the_connection_gives_way_to_the_names_next(receiver):
    # A name with two addresses (IPv6 and IPv4, say) whose first has nothing listening: the
    # delivery goes to the next (links.outbound.open_pinned, which webhooks send through),
    # instead of failing the attempt.
    from links.outbound import Deadline, open_pinned

    deadline = Deadline(5)
    try:
        answer = open_pinned(
            "POST", receiver.url, ["127.0.0.2", "127.0.0.1"], deadline, headers={}, body=b"{}"
        )
    finally:
        deadline.cancel()
    assert answer.status == 200
    assert len(receiver.received) == 1
