"""Reads for the webhooks pages, API and event fan-out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from .models import Webhook, WebhookDelivery

# How many deliveries the page and the API show per webhook.
DELIVERY_LOG_LENGTH = 20


def webhook_list(*, user: AbstractBaseUser) -> QuerySet[Webhook]:
    return Webhook.objects.filter(owner=user)


def webhook_get(*, user: AbstractBaseUser, webhook_id: int) -> Webhook:
    """The user's webhook; Webhook.DoesNotExist for another's (so it answers 404, not 403)."""
    return Webhook.objects.get(owner=user, pk=webhook_id)


def webhook_deliveries(*, webhook: Webhook, limit: int = DELIVERY_LOG_LENGTH):
    return list(WebhookDelivery.objects.filter(webhook=webhook)[:limit])


def webhooks_hearing(*, event: str, owner_ids: Iterable[int]) -> dict[int, list[Webhook]]:
    """{owner id: the active webhooks that hear `event` about that owner's links}.

    The one place that says whose links a webhook hears about: today its owner's. Workspaces
    (#16) change this function, and nothing else, to the workspace's members' links.
    """
    owner_ids = set(owner_ids)
    if not owner_ids:
        return {}
    hearing: dict[int, list[Webhook]] = defaultdict(list)
    # `events` is filtered here, not in SQL: SQLite has no JSON containment lookup.
    for webhook in Webhook.objects.filter(is_active=True, owner_id__in=owner_ids).order_by("pk"):
        if event in webhook.events:
            hearing[webhook.owner_id].append(webhook)
    return dict(hearing)
