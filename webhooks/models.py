"""Webhooks: where a person wants to hear about their links, and each delivery's log."""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.db import models

from workspaces.deletion import hand_over_to_the_team


class WebhookEvent(models.TextChoices):
    LINK_CREATED = "link.created", "A link is created"
    LINK_UPDATED = "link.updated", "A link is changed"
    LINK_REVOKED = "link.revoked", "A link is revoked"
    LINK_CLICKED = "link.clicked", "Links are clicked (batched: many clicks per call)"
    LINK_BROKEN = "link.broken", "A link's destination stops working"
    LINK_RECOVERED = "link.recovered", "A broken link's destination works again"


# Sent by "Send a test" only; nobody subscribes to it.
PING_EVENT = "ping"


def new_secret() -> str:
    return "whsec_" + secrets.token_hex(24)


class Webhook(models.Model):
    """A URL that hears about one workspace's links (decided in one place,
    webhooks.selectors.webhooks_hearing). `owner` is who made it."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=hand_over_to_the_team, related_name="webhooks"
    )
    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=2048)
    # Stored as it is: it signs every delivery. Shown to its owner on the page and in the API.
    secret = models.CharField(max_length=64, default=new_secret)
    events = models.JSONField(default=list)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Failed attempts in a row (any of its deliveries); a delivered one sets it back to 0.
    failures = models.PositiveIntegerField(default=0)
    # After a failed attempt none of its deliveries is tried before this (webhooks.services).
    retry_after = models.DateTimeField(null=True, blank=True)
    # Why the service turned it off (its receiver kept failing; its maker left the workspace):
    # shown to the workspace's owners and editors until someone turns it on again.
    disabled_reason = models.CharField(max_length=300, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


# A "Send a test" not yet attempted: it answers for the next presses (webhook_send_test), keeps
# its own time when its webhook backs off, and keeps the webhooks page reloading until it is in.
TEST_WAITING = models.Q(event=PING_EVENT, status=DeliveryStatus.PENDING, attempts=0)


class WebhookDelivery(models.Model):
    """One event for one webhook: its body, and how its attempts went (the last one's answer)."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.UUIDField(default=uuid.uuid4, unique=True)
    event = models.CharField(max_length=32)
    payload = models.JSONField()  # the whole body sent: {"id", "event", "created_at", "data"}
    attempts = models.PositiveIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_excerpt = models.TextField(blank=True, default="")  # the first 500 characters
    error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} {self.event_id}"

    @property
    def is_test_waiting(self) -> bool:
        """This delivery matches TEST_WAITING."""
        return (
            self.event == PING_EVENT
            and self.status == DeliveryStatus.PENDING
            and self.attempts == 0
        )
