"""The workspaces API's shapes. What a valid name, slug or role is stays the services' call."""

from __future__ import annotations

from rest_framework import serializers

from links.api.serializers import StrictCharField

from ..models import Role


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


class WorkspaceCreateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    slug = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=50,
        help_text="Letters, digits, - and _; made from the name when left out.",
    )


class WorkspaceUpdateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)


class MemberSerializer(serializers.Serializer):
    user = serializers.CharField(help_text="The member's username.")
    role = serializers.ChoiceField(choices=Role.choices)
    joined_at = serializers.DateTimeField()


class MemberAddSerializer(serializers.Serializer):
    user = StrictCharField(max_length=254, help_text="A username, or the email of an account.")
    role = serializers.ChoiceField(choices=Role.choices)


class MemberUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
