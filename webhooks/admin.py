"""Staff see webhooks and their deliveries; only their owners change them (page and API)."""

from django.contrib import admin

from core.admin_base import ReadOnlyAdminMixin
from webhooks.models import Webhook, WebhookDelivery


@admin.register(Webhook)
class WebhookAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "url",
        "owner",
        "workspace",
        "events",
        "is_active",
        "disabled_reason",
        "created_at",
    ]
    list_filter = ["is_active"]
    search_fields = ["url", "owner__username"]
    exclude = ["secret"]  # it signs the owner's deliveries: staff have no need to read it


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "event",
        "webhook",
        "status",
        "attempts",
        "response_status",
        "next_attempt_at",
        "created_at",
    ]
    list_filter = ["status", "event"]
    search_fields = ["event_id", "webhook__url"]
    list_select_related = ["webhook"]
