"""The workspaces API's shapes. What a valid name, slug or role is stays the services' call."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictCharField
from workspaces.models import Privacy, Role


class WorkspaceSerializer(serializers.Serializer):
    slug = serializers.CharField(help_text="Names the workspace in the API (`workspace`).")
    name = serializers.CharField()
    personal = serializers.BooleanField(
        help_text="True for a user's own workspace, made with their account."
    )
    role = serializers.ChoiceField(
        choices=Role.choices,
        allow_null=True,
        help_text="Your role: owner, editor or viewer (null for staff who are not members).",
    )
    members = serializers.IntegerField(help_text="How many members it has.")
    created_at = serializers.DateTimeField()
    raw_retention_days = serializers.IntegerField(
        allow_null=True,
        help_text="Days its links' raw visits are kept; null: the install's setting "
        "(ANALYTICS_RAW_RETENTION_DAYS). Totals and charts are kept for good.",
    )
    effective_retention_days = serializers.IntegerField(
        allow_null=True, help_text="What applies: its own days, else the install's (null: kept)."
    )
    api_rate_limit = serializers.IntegerField(
        allow_null=True,
        help_text="Requests per minute for each of its API keys without a limit of its own "
        "(null: only the API's global rates).",
    )
    analytics_privacy = serializers.ChoiceField(
        choices=[("", "The deployment's default"), *Privacy.choices],
        help_text="The owners' choice of what stored visits keep of their visitors; empty: "
        "the deployment's `ANALYTICS_PRIVACY` (docs/privacy.md).",
    )
    privacy_mode = serializers.ChoiceField(
        choices=Privacy.choices,
        help_text="The mode the workspace's visits are stored under now: `full`, `truncated` "
        "or `none`.",
    )


class WorkspaceCreateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    slug = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=50,
        help_text="Letters, digits, - and _; made from the name when left out.",
    )


class WorkspaceUpdateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100, required=False)
    raw_retention_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="Days to keep raw visits (0 or more); null: the install's setting.",
    )
    api_rate_limit = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="Requests per minute for each API key without a limit of its own (owners; "
        "null: only the API's global rates).",
    )
    analytics_privacy = serializers.ChoiceField(
        choices=[("", "The deployment's default"), *Privacy.choices],
        required=False,
        help_text="`full`, `truncated`, `none`, or empty for the deployment's default. Applies "
        "to visits stored from now on; stored visits and totals stay as they are.",
    )


class MemberSerializer(serializers.Serializer):
    user = serializers.CharField(help_text="The member's username.")
    role = serializers.ChoiceField(choices=Role.choices)
    joined_at = serializers.DateTimeField()


class MemberAddSerializer(serializers.Serializer):
    user = StrictCharField(max_length=254, help_text="A username, or the email of an account.")
    role = serializers.ChoiceField(choices=Role.choices)


class MemberUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class InvitationSerializer(serializers.Serializer):
    """An invitation as the workspace's owners see it."""

    id = serializers.IntegerField()
    user = serializers.CharField(help_text="The username or email it was sent to, as typed.")
    role = serializers.ChoiceField(choices=Role.choices)
    status = serializers.CharField(
        help_text="Always `pending`: it waits until accepted (the invitee is then a member), "
        "withdrawn or expired. A decline is not shown."
    )
    invited_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class InvitedWorkspaceSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    personal = serializers.BooleanField()


class MyInvitationSerializer(serializers.Serializer):
    """An invitation as its invitee sees it."""

    id = serializers.IntegerField()
    workspace = InvitedWorkspaceSerializer()
    role = serializers.ChoiceField(choices=Role.choices)
    invited_by = serializers.CharField(allow_null=True, help_text="The inviter's username.")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class AcceptedSerializer(serializers.Serializer):
    workspace = serializers.CharField(help_text="The slug of the workspace you are in now.")
    role = serializers.ChoiceField(choices=Role.choices)
    joined_at = serializers.DateTimeField()
