"""Reads for the webhooks pages, API and event fan-out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet

from webhooks.models import Webhook, WebhookDelivery
from workspaces.models import WRITER_ROLES
from workspaces.selectors import workspace_ids_of

# How many deliveries the page and the API show per webhook.
DELIVERY_LOG_LENGTH = 20


def webhook_list(*, user: AbstractBaseUser, workspace_id: int | None = None) -> QuerySet[Webhook]:
    """The webhooks of the workspaces the user is an owner or editor of (`workspace_id`: of
    that one only). Never a viewer's: a webhook carries the secret that signs its deliveries."""
    webhooks = Webhook.objects.select_related("workspace").filter(
        workspace_id__in=workspace_ids_of(user, writers_only=True)
    )
    if workspace_id is not None:
        webhooks = webhooks.filter(workspace_id=workspace_id)
    return webhooks


def webhook_get(
    *, user: AbstractBaseUser, webhook_id: int, workspace_id: int | None = None
) -> Webhook:
    """A webhook of a workspace the user is an owner or editor of (`workspace_id`: of that one
    only); Webhook.DoesNotExist for anyone else's, viewers included (so it answers 404)."""
    return webhook_list(user=user, workspace_id=workspace_id).get(pk=webhook_id)


def webhook_deliveries(*, webhook: Webhook, limit: int = DELIVERY_LOG_LENGTH):
    return list(WebhookDelivery.objects.filter(webhook=webhook)[:limit])


def webhooks_hearing(*, event: str, workspace_ids: Iterable[int]) -> dict[int, list[Webhook]]:
    """{workspace id: the active webhooks that hear `event` about that workspace's links}.

    The one place that says whose links a webhook hears about: its workspace's, while its
    maker (`owner`) is an owner or editor there. A member who left, was made a viewer or whose
    account was deleted has their webhooks turned off (webhooks.services); the join keeps a
    path that forgot it (a membership deleted in the admin) from leaking the team's links.
    """
    workspace_ids = set(workspace_ids)
    if not workspace_ids:
        return {}
    hearing: dict[int, list[Webhook]] = defaultdict(list)
    # `events` is filtered here, not in SQL: SQLite has no JSON containment lookup.
    webhooks = Webhook.objects.filter(
        is_active=True,
        workspace_id__in=workspace_ids,
        workspace__memberships__user_id=F("owner_id"),
        workspace__memberships__role__in=WRITER_ROLES,
    )
    for webhook in webhooks.order_by("pk"):
        if event in webhook.events:
            hearing[webhook.workspace_id].append(webhook)
    return dict(hearing)
