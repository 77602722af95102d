"""Security round 3, finding 3: a slowly answering receiver cannot hold a worker, a web thread or
the visit pipeline. Each attempt has one deadline for all of it (WEBHOOK_ATTEMPT_SECONDS); a
receiver that fails is backed off as a whole and, after WEBHOOK_DISABLE_AFTER_FAILURES failures
in a row, turned off with the reason shown to its owners, who may turn it on again; webhook
tasks go to a Celery queue of their own."""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from links.services.create import link_create
from shorturl_project.celery import app as celery_app
from webhooks import services
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery
from webhooks.tests.receiver import start_tarpit

pytestmark = pytest.mark.django_db


@pytest.fixture
def tarpit(allow_private):
    tarpits = []

    def start(**kwargs):
        tarpit, listener = start_tarpit(**kwargs)
        tarpits.append(listener)
        return tarpit

    yield start
    for listener in tarpits:
        listener.close()


def _attempt_one(user, url) -> tuple[WebhookDelivery, float]:
    webhook = services.webhook_create(user=user, url=url, events=["link.created"])
    delivery = services._new_delivery(webhook, "ping", {}, timezone.now())
    delivery.save()
    started = time.monotonic()
    services.webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery, time.monotonic() - started


@pytest.mark.parametrize("in_body", [False, True], ids=["trickled-headers", "trickled-body"])
def test_a_tarpit_receiver_is_cut_off_at_the_attempts_deadline(user, tarpit, settings, in_body):
    # One byte every 0.3 s, for up to 20 s: each read is quick, so a per-read timeout (5 s)
    # never fires; the deadline (1 s here) must.
    settings.WEBHOOK_ATTEMPT_SECONDS = 1.0
    pit = tarpit(every=0.3, for_seconds=20.0, in_body=in_body)
    delivery, took = _attempt_one(user, pit.url)
    assert took < 4.0, f"the attempt took {took:.1f} s, past its 1 s deadline"
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 1
    assert "No complete answer within 1 s: cut off." in delivery.error
    assert delivery.response_status is None  # a half answer is no answer


def test_a_failing_receiver_backs_the_whole_webhook_off(
    user, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [(503, "down", 0.0)]
    webhook = services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(3):
            link_create(user=user, long_url=f"https://example.com/backoff/{n}")

    before = timezone.now()
    # One attempt, not three: its first failure holds the webhook's other deliveries back.
    assert services.webhook_deliver_due() == 1
    assert len(receiver.received) == 1
    webhook.refresh_from_db()
    assert webhook.failures == 1
    assert timedelta(seconds=9) < webhook.retry_after - before < timedelta(seconds=12)
    assert set(WebhookDelivery.objects.values_list("next_attempt_at", flat=True)) == {
        webhook.retry_after
    }
    # A new event meanwhile waits too.
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/backoff/later")
    assert services.webhook_deliver_due() == 0
    assert len(receiver.received) == 1


def test_a_receiver_that_keeps_failing_is_turned_off_with_its_reason_until_turned_on(
    user, client, receiver, settings
):
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 3
    receiver.answers = [(500, "broken", 0.0)]
    webhook = services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    for _ in range(3):
        delivery = services._new_delivery(webhook, "link.created", {}, timezone.now())
        delivery.save()
        services.webhook_delivery_attempt(delivery_id=delivery.pk)
    webhook.refresh_from_db()
    assert webhook.is_active is False
    assert webhook.disabled_reason.startswith("Turned off after 3 failed attempts in a row")
    assert "The receiver answered 500." in webhook.disabled_reason

    # Its owner sees why, on the page and in the API.
    client.force_login(user)
    page = client.get(reverse("webhooks")).text
    assert "Turned off after 3 failed attempts in a row" in page
    api = APIClient()
    api.force_authenticate(user)
    shown = api.get(f"/api/v1/webhooks/{webhook.pk}/").json()
    assert shown["is_active"] is False and shown["disabled_reason"] == webhook.disabled_reason
    assert shown["failures"] == 3

    # Turned on again, it starts afresh.
    turned_on = api.patch(f"/api/v1/webhooks/{webhook.pk}/", {"is_active": True}, format="json")
    assert turned_on.status_code == 200, turned_on.content
    assert (turned_on.json()["disabled_reason"], turned_on.json()["failures"]) == ("", 0)
    assert Webhook.objects.get(pk=webhook.pk).retry_after is None


def test_staff_see_why_a_webhook_was_turned_off_in_the_admin(admin_client, user):
    webhook = services.webhook_create(
        user=user, url="https://93.184.215.14/hook", events=["link.created"]
    )
    services.webhook_disable(webhook_id=webhook.pk, reason="Turned off after 15 failed attempts")
    listing = admin_client.get("/admin/webhooks/webhook/")
    assert "Turned off after 15 failed attempts" in listing.text


def test_send_a_test_to_a_tarpit_answers_at_once(user, client, tarpit, settings):
    """The page's button and the API queue the ping: the request never waits on the receiver."""
    settings.WEBHOOK_ATTEMPT_SECONDS = 30.0
    pit = tarpit(every=3.0, for_seconds=60.0)
    webhook = services.webhook_create(user=user, url=pit.url, events=["link.created"])
    client.force_login(user)
    started = time.monotonic()
    page = client.post(reverse("webhook_test", args=[webhook.pk]), follow=True)
    api = APIClient()
    api.force_authenticate(user)
    answer = api.post(f"/api/v1/webhooks/{webhook.pk}/test/")
    took = time.monotonic() - started
    assert "Test queued for" in page.text and answer.status_code == 202
    assert took < 3.0, f"Send a test took {took:.1f} s with a tarpit receiver"
    assert pit.cut_off_after == []  # nothing was even sent yet


def test_webhook_tasks_go_to_their_own_queue_never_the_visit_workers():
    """`make worker` consumes the default queue (visits, roll-ups); the webhooks queue has its
    own worker (`make webhook-worker`)."""
    router = celery_app.amqp.router

    def queue_of(task_name: str) -> str:
        route = router.route({}, task_name)
        return route["queue"].name

    assert queue_of("webhooks.tasks.deliver_webhook_task") == "webhooks"
    assert queue_of("webhooks.tasks.deliver_due_webhooks_task") == "webhooks"
    assert queue_of("analytics.tasks.flush_visits_task") == "celery"
    assert queue_of("analytics.tasks.aggregate_hourly_task") == "celery"


def test_pressing_send_a_test_again_while_one_waits_sends_nothing_more(user, receiver):
    webhook = services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    first = services.webhook_send_test(user=user, webhook_id=webhook.pk)
    for _ in range(7):
        assert services.webhook_send_test(user=user, webhook_id=webhook.pk).pk == first.pk
    assert services.webhook_deliver_due() == 1
    assert len(receiver.received) == 1
    # Once it is over, a new press sends a new one.
    assert services.webhook_send_test(user=user, webhook_id=webhook.pk).pk != first.pk


def test_a_tls_handshake_that_never_ends_is_cut_off_at_the_deadline(user, allow_private, settings):
    """An https receiver that takes the connection and never answers the ClientHello: the
    handshake is part of the attempt's deadline (1 s here), not only each read's 5 s."""
    settings.WEBHOOK_ATTEMPT_SECONDS = 1.0
    listener = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    try:
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/hook"
        delivery, took = _attempt_one(user, url)
    finally:
        listener.close()
        for conn, _ in held:
            conn.close()
    assert took < 3.0, f"the attempt took {took:.1f} s, past its 1 s deadline"
    assert "No complete answer within 1 s: cut off." in delivery.error
