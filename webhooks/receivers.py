"""The events this app hears (links.events, analytics.events) turned into deliveries."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from django.dispatch import receiver

from analytics.events import visits_stored
from links.events import link_changed
from links.models import UrlLink
from links.shortlinks import link_short_url
from webhooks.models import Webhook, WebhookEvent
from webhooks.selectors import webhooks_hearing
from webhooks.services import webhook_disable_for_departed_member, webhook_events_emit
from workspaces.events import member_departed


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def link_data(link: UrlLink) -> dict:
    """A link as webhooks tell it (the `data.link` of link.created/updated/revoked/broken/
    recovered)."""
    return {
        "id": link.pk,
        "code": link.code,
        "short_url": link_short_url(link),
        "long_url": link.long_url,
        "title": link.title,
        "redirect_type": link.redirect_type,
        "created_at": _time(link.created_at),
        "updated_at": _time(link.updated_at),
        "valid_since": _time(link.valid_since),
        "expires_at": _time(link.expires_at),
        "revoked_at": _time(link.revoked_at),
        "expired_url": link.expired_url or None,  # the fallback once stopped (issue #28)
        # App deep links (issue #28): where iOS / Android visitors go; None for none.
        "ios_url": link.ios_url or None,
        "android_url": link.android_url or None,
        # Destination health (issue #29): where visitors go while it is broken, and its state.
        "fallback_url": link.fallback_url or None,
        "health": {
            "status": link.health_status,
            "since": _time(link.health_since),
            "reason": link.health_reason,
            "checked_at": _time(link.health_checked_at),
        },
        "track_conversions": link.track_conversions,  # issue #29
    }


@receiver(link_changed, dispatch_uid="webhooks.link_changed")
def on_link_changed(sender, *, event: str, links: list[UrlLink], **kwargs) -> None:
    by_workspace: dict[int, list[dict]] = defaultdict(list)
    hearing = webhooks_hearing(event=event, workspace_ids={link.workspace_id for link in links})
    for link in links:
        if link.workspace_id in hearing:
            by_workspace[link.workspace_id].append({"link": link_data(link)})
    if by_workspace:
        webhook_events_emit(event=event, hearing=hearing, data_by_workspace=dict(by_workspace))


@receiver(visits_stored, dispatch_uid="webhooks.visits_stored")
def on_visits_stored(sender, *, clicks, **kwargs) -> None:
    """One link.clicked delivery per webhook per stored batch, carrying all its workspace's
    clicks."""
    if not Webhook.objects.filter(is_active=True).exists():
        return  # the common case: one cheap query per stored batch, no click built
    event = WebhookEvent.LINK_CLICKED.value
    batch = clicks()
    workspaces = dict(
        UrlLink.objects.filter(pk__in={click["link_id"] for click in batch}).values_list(
            "pk", "workspace_id"
        )
    )
    hearing = webhooks_hearing(event=event, workspace_ids=set(workspaces.values()))
    if not hearing:
        return
    by_workspace: dict[int, list[dict]] = defaultdict(list)
    for click in sorted(batch, key=lambda click: click["visit_time"]):
        workspace_id = workspaces.get(click["link_id"])
        if workspace_id in hearing:
            by_workspace[workspace_id].append({**click, "visit_time": _time(click["visit_time"])})
    webhook_events_emit(
        event=event,
        hearing=hearing,
        data_by_workspace={ws: [{"clicks": items}] for ws, items in by_workspace.items()},
    )


@receiver(member_departed, dispatch_uid="webhooks.member_departed")
def on_member_departed(sender, *, user, workspace_id, why, **kwargs) -> None:
    webhook_disable_for_departed_member(user=user, workspace_id=workspace_id, why=why)
