"""Who sends deliveries: the embedded runner's own thread (no worker), or a Celery task sent by
name when a delivery is made plus beat's sweep (services mode). Never the request that made it."""

from __future__ import annotations

import pytest

from links.services.create import link_create
from shorturl_project import embedded
from shorturl_project.celery import app as celery_app
from webhooks import services, tasks
from webhooks.models import DeliveryStatus, WebhookDelivery

pytestmark = pytest.mark.django_db


def test_the_embedded_node_delivers_in_a_runner_of_its_own(monkeypatch):
    monkeypatch.setattr(embedded, "uses_redis", lambda: False)
    runners = embedded._node_runners()
    [job] = runners[embedded.WEBHOOKS_LOCK]
    assert job.name == "deliver-due-webhooks"
    assert all(
        job.name != "deliver-due-webhooks"
        for lock, jobs in runners.items()
        if lock != embedded.WEBHOOKS_LOCK
        for job in jobs
    ), "a slow receiver must not hold up the visits' runner"


def test_the_embedded_job_sends_what_is_due(
    user, receiver, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(embedded, "uses_redis", lambda: False)
    services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/embedded")
    assert receiver.received == []  # the create did not send it
    [job] = embedded._node_runners()[embedded.WEBHOOKS_LOCK]
    assert job.run() == 1
    assert len(receiver.received) == 1
    assert WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED


def test_services_mode_sends_a_task_by_name_after_the_commit(
    user, receiver, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(services, "uses_redis", lambda: True)
    sent = []
    # Every task sent by name goes here; with Redis a create may also ask for a pool refill.
    monkeypatch.setattr(
        services.current_app,
        "send_task",
        lambda name, args=None, **options: sent.append((name, args)),
    )
    services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/services")
    delivery = WebhookDelivery.objects.get()
    assert [task for task in sent if task[0].startswith("webhooks.")] == [
        ("webhooks.tasks.deliver_webhook_task", [delivery.pk])
    ]
    assert receiver.received == []
    # What the worker then runs:
    assert tasks.deliver_webhook_task(delivery.pk) is True
    assert tasks.deliver_webhook_task(delivery.pk) is None  # done: a repeat sends nothing
    assert len(receiver.received) == 1


def test_beats_sweep_is_scheduled_and_sends_what_is_due(
    user, receiver, settings, django_capture_on_commit_callbacks
):
    entry = celery_app.conf.beat_schedule["deliver-due-webhooks"]
    assert entry["task"] == "webhooks.tasks.deliver_due_webhooks_task"
    services.webhook_create(user=user, url=receiver.url, events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/beat")
    assert tasks.deliver_due_webhooks_task() == 1
    assert len(receiver.received) == 1


def test_a_failing_listener_never_fails_the_change(
    user, receiver, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    services.webhook_create(user=user, url=receiver.url, events=["link.created"])

    def broken(**kwargs):
        raise RuntimeError("listener broke")

    monkeypatch.setattr("webhooks.receivers.webhook_events_emit", broken)
    with django_capture_on_commit_callbacks(execute=True):
        result = link_create(user=user, long_url="https://example.com/still-made")
    assert result.created and result.link.pk
    assert "A listener of link.created" in caplog.text
