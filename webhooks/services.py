"""Webhooks' writes: the webhooks themselves, the deliveries events make, and their attempts.

A delivery is made when an event happens (after the change committed) and attempted by
`webhook_deliver_due` (a Celery beat task in services mode, a job of the embedded runner's
otherwise) or at once by a Celery task sent when it is made (services mode). Both run in a lane
of their own, never on a web request nor beside storing visits: the `webhooks` Celery queue,
consumed by its own worker (`make webhook-worker`), or the embedded runner's webhooks thread.

An attempt that fails is tried again after RETRY_DELAYS; after the last one the delivery is
failed. A failed attempt also backs its whole webhook off: none of its deliveries is tried
before its `retry_after` (the same delays, by its failures in a row), and after
settings.WEBHOOK_DISABLE_AFTER_FAILURES failures in a row the webhook is turned off with the
reason shown to its workspace's owners and editors, until one of them turns it on again.

Only the webhooks of a workspace's current owners and editors hear its links: a member who
leaves, is made a viewer, or whose account is deleted has their webhooks there turned off with
that reason (webhook_disable_for_departed_member), and a webhook whose maker is no longer a
writer there sends nothing even if a path forgot to say so (webhooks_hearing, the attempt).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit.services import audit_change, snapshot
from core.redis_conn import uses_redis
from webhooks import sending
from webhooks.models import (
    PING_EVENT,
    TEST_WAITING,
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from webhooks.selectors import webhook_get
from webhooks.targets import validate_webhook_url
from workspaces import events as workspace_events
from workspaces.models import Workspace
from workspaces.selectors import can_write
from workspaces.services import workspace_for_writing

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
# The Celery queue of every webhooks task (settings.CELERY_TASK_ROUTES), consumed by a worker of
# its own so that a slow receiver never holds the workers that store visits.
QUEUE = "webhooks"

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
    with transaction.atomic():
        webhook = Webhook.objects.create(
            owner=user, workspace=workspace, url=url, events=events, is_active=bool(is_active)
        )
        audit_change("webhook.create", webhook, actor=user)
    return webhook


def webhook_update(
    *, user: AbstractBaseUser, webhook_id: int, url=_UNSET, events=_UNSET, is_active=_UNSET
) -> Webhook:
    """Change a webhook of a workspace the user is an owner or editor of (webhook_get:
    Webhook.DoesNotExist for anyone else's, a viewer's included)."""
    webhook = webhook_get(user=user, webhook_id=webhook_id)
    before = snapshot(webhook)
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
    if errors:
        raise ValidationError(errors)
    if is_active is not _UNSET:
        if is_active and not webhook.is_active:
            _turn_on(webhook, by=user)
        webhook.is_active = bool(is_active)
    with transaction.atomic():
        webhook.save()
        audit_change("webhook.update", webhook, actor=user, before=before)
    return webhook


def _turn_on(webhook: Webhook, *, by: AbstractBaseUser) -> None:
    """A webhook turned on again starts afresh. One whose maker is no longer an owner or
    editor of its workspace becomes the webhook of whoever turns it on: it is theirs to answer
    for now, and it would otherwise hear nothing (webhooks_hearing)."""
    webhook.failures = 0
    webhook.retry_after = None
    webhook.disabled_reason = ""
    webhook.disabled_at = None
    if not can_write(user=webhook.owner, workspace_id=webhook.workspace_id):
        webhook.owner = by


def webhook_disable(*, webhook_id: int, reason: str) -> bool:
    """Turn a webhook off with the reason its owners are shown; False if it was off already.
    Its pending deliveries fail with that reason when they come due."""
    return bool(
        Webhook.objects.filter(pk=webhook_id, is_active=True).update(
            is_active=False, disabled_reason=reason[:300], disabled_at=timezone.now()
        )
    )


DEPARTED_REASONS = {
    workspace_events.REMOVED: (
        "Turned off: its maker {user} left the workspace or was removed from it."
    ),
    workspace_events.DEMOTED: (
        "Turned off: its maker {user} is no longer an owner or editor of the workspace."
    ),
    workspace_events.DELETED: "Turned off: the account of its maker {user} was deleted.",
}


def webhook_disable_for_departed_member(
    *, user: AbstractBaseUser, why: str, workspace_id: int | None = None
) -> int:
    """Turn off the webhooks `user` made in a workspace (`workspace_id`; None: in every
    workspace) as they leave it, are made a viewer (`why`: removed, demoted, deleted): their
    receiver must not keep hearing the team's links and clicks once they may no longer see or
    manage them. Their pending deliveries fail; returns how many webhooks were turned off."""
    reason = DEPARTED_REASONS[why].format(user=user.get_username())[:300]
    webhooks = Webhook.objects.filter(owner_id=user.pk, is_active=True)
    if workspace_id is not None:
        webhooks = webhooks.filter(workspace_id=workspace_id)
    now = timezone.now()
    ids = list(webhooks.values_list("pk", flat=True))
    Webhook.objects.filter(pk__in=ids).update(
        is_active=False, disabled_reason=reason, disabled_at=now
    )
    WebhookDelivery.objects.filter(webhook_id__in=ids, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED, error=reason, next_attempt_at=None, updated_at=now
    )
    if ids:
        logger.info("Turned off webhooks %s: %s", ids, reason)
    return len(ids)


def webhook_delete(*, user: AbstractBaseUser, webhook_id: int) -> None:
    """Delete a webhook and its deliveries, as webhook_update may change it."""
    webhook = webhook_get(user=user, webhook_id=webhook_id)
    with transaction.atomic():
        audit_change("webhook.delete", webhook, actor=user, before=snapshot(webhook), after={})
        webhook.delete()


# --- Deliveries --------------------------------------------------------------------------------


def _payload(event: str, data: dict, event_id: uuid.UUID, now: datetime) -> dict:
    return {
        "id": str(event_id),
        "event": event,
        "created_at": now.isoformat().replace("+00:00", "Z"),
        "data": data,
    }


def _new_delivery(
    webhook: Webhook, event: str, data: dict, now: datetime, *, at_once: bool = False
) -> WebhookDelivery:
    """A delivery, due now; or, for a webhook backing off, at its retry_after (`at_once`: a
    test the owner asked for, due now whatever)."""
    event_id = uuid.uuid4()
    due = now
    if not at_once and webhook.retry_after is not None and webhook.retry_after > now:
        due = webhook.retry_after
    return WebhookDelivery(
        webhook=webhook,
        event_id=event_id,
        event=event,
        payload=_payload(event, data, event_id, now),
        next_attempt_at=due,
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
            current_app.send_task(DELIVER_TASK, args=[delivery_id], queue=QUEUE)

    transaction.on_commit(send)


def webhook_events_emit(
    *, event: str, hearing: dict[int, list[Webhook]], data_by_workspace: dict[int, list[dict]]
) -> int:
    """Make a delivery of `event` for every item of data, to every webhook hearing its
    workspace's links ({workspace id: [data, …]}; `hearing`: webhooks_hearing's answer for
    `event`, which the caller has read to build no data nobody hears); returns how many were
    made."""
    now = timezone.now()
    deliveries = [
        _new_delivery(webhook, event, data, now)
        for workspace_id, items in data_by_workspace.items()
        for webhook in hearing.get(workspace_id, ())
        for data in items
    ]
    if not deliveries:
        return 0
    with transaction.atomic():
        WebhookDelivery.objects.bulk_create(deliveries, batch_size=500)
        _queue([delivery.event_id for delivery in deliveries])
    for webhook in {delivery.webhook.pk: delivery.webhook for delivery in deliveries}.values():
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
    """Queue a `ping`, due at once, and return its delivery (pending): it is attempted in the
    webhooks' own lane within seconds, never on the caller's request, which a slow receiver
    would hold for the whole attempt. Its outcome shows in the webhook's delivery log; a failed
    ping is retried like any delivery. A webhook that is off or backing off is tested all the
    same, at once: that is how its owner sees whether the receiver answers again. A test not
    yet over is answered for the next ones: pressing the button again sends nothing more, so
    a receiver that holds its tests costs the lane one attempt at a time."""
    webhook = webhook_get(user=user, webhook_id=webhook_id)
    waiting = WebhookDelivery.objects.filter(TEST_WAITING, webhook=webhook).first()
    if waiting is not None:
        return waiting
    now = timezone.now()
    data = {"webhook": {"id": webhook.pk, "url": webhook.url, "events": webhook.events}}
    delivery = _new_delivery(webhook, PING_EVENT, data, now, at_once=True)
    with transaction.atomic():
        delivery.save()
        _queue([delivery.event_id])
    _purge_old(webhook)
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
    was the last attempt, or its webhook is off), None not attempted (not due, finished, or
    another run has it)."""
    now = timezone.now()
    if not _claim(delivery_id, now):
        return None
    delivery = (
        WebhookDelivery.objects.select_related("webhook__owner").filter(pk=delivery_id).first()
    )
    if delivery is None:
        return None  # its webhook was deleted meanwhile
    webhook = delivery.webhook
    is_ping = delivery.event == PING_EVENT
    if (
        not is_ping
        and webhook.is_active
        and not can_write(user=webhook.owner, workspace_id=webhook.workspace_id)
    ):
        # Its maker left by a path that did not say so (webhooks_hearing keeps new events off).
        webhook_disable(
            webhook_id=webhook.pk,
            reason=DEPARTED_REASONS[workspace_events.DEMOTED].format(
                user=webhook.owner.get_username()
            ),
        )
        webhook.refresh_from_db()
    if not webhook.is_active and not is_ping:
        result = sending.AttemptResult(
            delivered=False, error=webhook.disabled_reason or "The webhook is paused."
        )
        give_up = True  # not retried: it would only fail again
        counted = False
    else:
        result = sending.post(url=webhook.url, secret=webhook.secret, payload=delivery.payload)
        delivery.attempts += 1
        give_up = delivery.attempts >= MAX_ATTEMPTS
        counted = True
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
    if counted:
        _webhook_attempted(webhook, delivered=result.delivered, error=result.error)
    if not result.delivered:
        logger.info(
            "Webhook delivery %s to %s failed (attempt %s): %s",
            delivery.event_id,
            webhook.url,
            delivery.attempts,
            result.error,
        )
    return result.delivered


def _webhook_attempted(webhook: Webhook, *, delivered: bool, error: str) -> None:
    """Keep the webhook's failures in a row. A failure backs the whole webhook off (its other
    deliveries wait with the failed one, so a receiver that is down or slow costs one attempt
    per delay, not one per event); enough of them in a row turn it off."""
    now = timezone.now()
    if delivered:
        Webhook.objects.filter(pk=webhook.pk).update(failures=0, retry_after=None)
        return
    failures = webhook.failures + 1
    retry_after = now + timedelta(seconds=RETRY_DELAYS[min(failures, len(RETRY_DELAYS)) - 1])
    Webhook.objects.filter(pk=webhook.pk).update(
        failures=F("failures") + 1, retry_after=retry_after
    )
    WebhookDelivery.objects.filter(
        webhook_id=webhook.pk, status=DeliveryStatus.PENDING, next_attempt_at__lt=retry_after
    ).exclude(TEST_WAITING).update(next_attempt_at=retry_after)
    limit = settings.WEBHOOK_DISABLE_AFTER_FAILURES
    if webhook.is_active and failures >= limit:
        webhook_disable(
            webhook_id=webhook.pk,
            reason=f"Turned off after {limit} failed attempts in a row; the last: {error}",
        )


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
