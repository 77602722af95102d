"""The webhooks API's shapes. What a valid URL or event list is stays the services' call."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictBooleanField, StrictCharField
from webhooks.models import Webhook, WebhookDelivery, WebhookEvent


class WebhookSerializer(serializers.ModelSerializer):
    secret = serializers.CharField(
        read_only=True,
        help_text="Signs every delivery: X-Shorturl-Signature is sha256=HMAC-SHA256(secret, body).",
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices), read_only=True
    )
    workspace = serializers.SlugRelatedField(
        slug_field="slug",
        read_only=True,
        help_text="The slug of the workspace whose links the webhook hears about.",
    )

    owner = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="Who made it (or turned it on last)."
    )
    disabled_reason = serializers.CharField(
        read_only=True,
        help_text="Why the service turned it off (its receiver kept failing, or its maker left "
        "the workspace or was made a viewer); empty when it is on or was paused by a person. "
        "PATCH is_active=true turns it on again.",
    )
    failures = serializers.IntegerField(
        read_only=True, help_text="Failed attempts in a row (0 after a delivered one)."
    )
    retry_after = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="After a failed attempt, none of its deliveries is tried before this.",
    )

    class Meta:
        model = Webhook
        fields = [
            "id",
            "url",
            "events",
            "is_active",
            "workspace",
            "owner",
            "secret",
            "created_at",
            "disabled_reason",
            "disabled_at",
            "failures",
            "retry_after",
        ]
        read_only_fields = fields


def _events_field(**kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices),
        allow_empty=False,
        help_text="The events to hear: link.created, link.updated, link.revoked, link.clicked.",
        **kwargs,
    )


def _url_field(**kwargs) -> StrictCharField:
    return StrictCharField(
        max_length=2048,
        help_text=(
            "The http(s) URL that receives the POSTs. Loopback, private and reserved addresses "
            "are refused."
        ),
        **kwargs,
    )


class WebhookCreateSerializer(serializers.Serializer):
    url = _url_field()
    events = _events_field()
    is_active = StrictBooleanField(required=False, default=True)
    workspace = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=50,
        help_text=(
            "The slug of the workspace whose links it hears about (one where you are an owner "
            "or editor). Left out: an API key's own workspace, else your personal one."
        ),
    )


class WebhookListQuerySerializer(serializers.Serializer):
    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Only this workspace's webhooks (its slug). Without it: those of every "
        "workspace you belong to (an API key: its own workspace's). A workspace you do not "
        "belong to is a 404.",
    )


class WebhookUpdateSerializer(serializers.Serializer):
    url = _url_field(required=False)
    events = _events_field(required=False)
    is_active = StrictBooleanField(required=False)


class WebhookDeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = [
            "event_id",
            "event",
            "status",
            "attempts",
            "response_status",
            "response_excerpt",
            "error",
            "next_attempt_at",
            "created_at",
            "updated_at",
            "payload",
        ]
        read_only_fields = fields
