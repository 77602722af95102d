"""Webhooks' writes: the webhooks themselves, the deliveries events make, and their attempts.

A delivery is made when an event happens (after the change committed) and attempted by
`webhook_deliver_due` (a Celery beat task in services mode, a job of the embedded runner's
otherwise) or at once by a Celery task sent when it is made (services mode). An attempt that
fails is tried again after RETRY_DELAYS; after the last one the delivery is failed.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from celery import current_app
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from shorturl_project.redis_conn import uses_redis
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing

from . import sending
from .models import PING_EVENT, DeliveryStatus, Webhook, WebhookDelivery, WebhookEvent
from .selectors import webhook_get, webhooks_hearing
from .targets import validate_webhook_url

logger = logging.getLogger("shorturl.webhooks")

EVENTS = [event.value for event in WebhookEvent]
# Seconds to wait after the 1st, 2nd… failed attempt; after the last, the delivery is failed.
RETRY_DELAYS = (10, 60, 300, 1800, 7200)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
# Deliveries kept per webhook (older finished ones are purged as new ones come).
KEEP_DELIVERIES = 100
# An attempt in progress holds its delivery this long, so a parallel run does not send it too.
CLAIM_SECONDS = 60
MAX_WEBHOOKS_PER_WORKSPACE = 20
DELIVER_TASK = "webhooks.tasks.deliver_webhook_task"

_UNSET = object()


def validate_events(events: Iterable[str] | None) -> list[str]:
    chosen = list(dict.fromkeys(events or []))
    unknown = [event for event in chosen if event not in EVENTS]
    if unknown:
        raise ValidationError(
            {"events": [f"Unknown event {unknown[0]!r}: choose from {', '.join(EVENTS)}."]}
        )
    if not chosen:
        raise ValidationError({"events": ["Choose at least one event."]})
    return [event for event in EVENTS if event in chosen]


def webhook_create(
    *,
    user: AbstractBaseUser,
    url: str,
    events: Iterable[str],
    is_active: bool = True,
    workspace: Workspace | str | None = None,
    pinned_workspace_id: int | None = None,
) -> Webhook:
    """A new webhook with a new secret, hearing a workspace's links (`workspace` and
    `pinned_workspace_id` as for link_create: an owner or editor's); the URL must be a public
    http(s) one (webhooks.targets)."""
    workspace = workspace_for_writing(user=user, workspace=workspace, pinned_id=pinned_workspace_id)
    errors: dict[str, list[str]] = {}
    try:
        url = validate_webhook_url(url)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    try:
        events = validate_events(events)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    if Webhook.objects.filter(workspace=workspace).count() >= MAX_WEBHOOKS_PER_WORKSPACE:
        errors.setdefault("non_field_errors", []).append(
            f"The workspace has {MAX_WEBHOOKS_PER_WORKSPACE} webhooks, the most it may have."
        )
    if errors:
        raise ValidationError(errors)
    return Webhook.objects.create(
        owner=user, workspace=workspace, url=url, events=events, is_active=bool(is_active)
    )


def webhook_update(
    *, user: AbstractBaseUser, webhook_id: int, url=_UNSET, events=_UNSET, is_active=_UNSET
) -> Webhook:
    """Change a webhook of a workspace the user is an owner or editor of (webhook_get:
    Webhook.DoesNotExist for anyone else's, a viewer's included)."""
    webhook = webhook_get(user=user, webhook_id=webhook_id)
    errors: dict[str, list[str]] = {}
    if url is not _UNSET:
        try:
            webhook.url = validate_webhook_url(url)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if events is not _UNSET:
        try:
            webhook.events = validate_events(events)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if is_active is not _UNSET:
        webhook.is_active = bool(is_active)
    if errors:
        raise ValidationError(errors)
    webhook.save()
    return webhook


def webhook_delete(*, user: AbstractBaseUser, webhook_id: int) -> None:
    """Delete a webhook and its deliveries, as webhook_update may change it."""
    webhook_get(user=user, webhook_id=webhook_id).delete()


# --- Deliveries --------------------------------------------------------------------------------


def _payload(event: str, data: dict, event_id: uuid.UUID, now: datetime) -> dict:
    return {
        "id": str(event_id),
        "event": event,
        "created_at": now.isoformat().replace("+00:00", "Z"),
        "data": data,
    }


def _new_delivery(webhook: Webhook, event: str, data: dict, now: datetime) -> WebhookDelivery:
    event_id = uuid.uuid4()
    return WebhookDelivery(
        webhook=webhook,
        event_id=event_id,
        event=event,
        payload=_payload(event, data, event_id, now),
        next_attempt_at=now,
    )


def _queue(event_ids: list[uuid.UUID]) -> None:
    """Services mode: a worker attempts each new delivery at once (beat's sweep catches any task
    lost). Embedded mode: the node's runner attempts them within WEBHOOK_CHECK_SECONDS."""
    if not event_ids or not uses_redis():
        return
    # Not every database hands back the new ids from a bulk insert: read them by event id.
    ids = [
        pk
        for start in range(0, len(event_ids), 500)
        for pk in WebhookDelivery.objects.filter(
            event_id__in=event_ids[start : start + 500]
        ).values_list("pk", flat=True)
    ]

    def send() -> None:
        for delivery_id in ids:
            # By name: tasks.py imports this module, never the other way round.
            current_app.send_task(DELIVER_TASK, args=[delivery_id])

    transaction.on_commit(send)


def webhook_events_emit(*, event: str, data_by_workspace: dict[int, list[dict]]) -> int:
    """Make a delivery of `event` for every item of data, to every webhook hearing its
    workspace's links ({workspace id: [data, …]}); returns how many were made."""
    hearing = webhooks_hearing(event=event, workspace_ids=data_by_workspace)
    if not hearing:
        return 0
    now = timezone.now()
    deliveries = [
        _new_delivery(webhook, event, data, now)
        for workspace_id, webhooks in hearing.items()
        for webhook in webhooks
        for data in data_by_workspace[workspace_id]
    ]
    with transaction.atomic():
        WebhookDelivery.objects.bulk_create(deliveries, batch_size=500)
        _queue([delivery.event_id for delivery in deliveries])
    for webhook in {webhook.pk: webhook for ws in hearing.values() for webhook in ws}.values():
        _purge_old(webhook)
    return len(deliveries)


def _purge_old(webhook: Webhook) -> None:
    """Keep the last KEEP_DELIVERIES of a webhook's deliveries (pending ones are never purged)."""
    oldest_kept = (
        WebhookDelivery.objects.filter(webhook=webhook)
        .order_by("-id")
        .values_list("id", flat=True)[KEEP_DELIVERIES - 1 : KEEP_DELIVERIES]
    )
    oldest_kept = list(oldest_kept)
    if oldest_kept:
        WebhookDelivery.objects.filter(webhook=webhook, id__lt=oldest_kept[0]).exclude(
            status=DeliveryStatus.PENDING
        ).delete()


def webhook_send_test(*, user: AbstractBaseUser, webhook_id: int) -> WebhookDelivery:
    """Send a `ping` now (the person is waiting for its outcome) and return its delivery; a
    failed ping is retried like any delivery."""
    webhook = webhook_get(user=user, webhook_id=webhook_id)
    now = timezone.now()
    data = {"webhook": {"id": webhook.pk, "url": webhook.url, "events": webhook.events}}
    delivery = _new_delivery(webhook, PING_EVENT, data, now)
    delivery.save()
    _purge_old(webhook)
    webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def _claim(delivery_id: int, now: datetime) -> bool:
    """Take a due pending delivery for one attempt; False when it is not due or taken."""
    return bool(
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
        ).update(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
    )


def webhook_delivery_attempt(*, delivery_id: int) -> bool | None:
    """Attempt a delivery if it is due: True delivered, False failed (retried later unless it
    was the last attempt), None not attempted (not due, finished, or another run has it)."""
    now = timezone.now()
    if not _claim(delivery_id, now):
        return None
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None:
        return None  # its webhook was deleted meanwhile
    webhook = delivery.webhook
    if not webhook.is_active:
        result = sending.AttemptResult(delivered=False, error="The webhook is paused.")
        give_up = True  # not retried: it would only fail again
    else:
        result = sending.post(url=webhook.url, secret=webhook.secret, payload=delivery.payload)
        delivery.attempts += 1
        give_up = delivery.attempts >= MAX_ATTEMPTS
    delivery.response_status = result.status_code
    delivery.response_excerpt = result.excerpt
    delivery.error = result.error
    if result.delivered:
        delivery.status = DeliveryStatus.SUCCEEDED
        delivery.next_attempt_at = None
    elif give_up:
        delivery.status = DeliveryStatus.FAILED
        delivery.next_attempt_at = None
    else:
        delay = RETRY_DELAYS[delivery.attempts - 1]
        delivery.next_attempt_at = timezone.now() + timedelta(seconds=delay)
    # An UPDATE, not save(): the webhook may have been deleted during the attempt.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=delivery.attempts,
        status=delivery.status,
        response_status=delivery.response_status,
        response_excerpt=delivery.response_excerpt,
        error=delivery.error,
        next_attempt_at=delivery.next_attempt_at,
        updated_at=timezone.now(),
    )
    if not result.delivered:
        logger.info(
            "Webhook delivery %s to %s failed (attempt %s): %s",
            delivery.event_id,
            webhook.url,
            delivery.attempts,
            result.error,
        )
    return result.delivered


def webhook_deliver_due(*, max_seconds: float = 30.0, limit: int = 500) -> int:
    """Attempt the deliveries that are due, oldest first, for at most about `max_seconds`;
    returns how many were attempted. Safe to run in parallel (each delivery is claimed)."""
    started = time.monotonic()
    due = list(
        WebhookDelivery.objects.filter(
            status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now()
        )
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    attempted = 0
    for delivery_id in due:
        if time.monotonic() - started > max_seconds:
            break
        if webhook_delivery_attempt(delivery_id=delivery_id) is not None:
            attempted += 1
    return attempted
