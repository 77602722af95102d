"""The tags API: which workspace's tags, a tag, its rename."""

from __future__ import annotations

from rest_framework import serializers


class WorkspaceQuerySerializer(serializers.Serializer):
    """`?workspace=` of the tags API."""

    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="The workspace whose tags (its slug). Without it: an API key's own "
        "workspace, else your personal one. A workspace you do not belong to is a 404.",
    )


class TagSerializer(serializers.Serializer):
    """A tag of GET /api/v1/tags/."""

    name = serializers.CharField(help_text="As first typed.")
    links = serializers.IntegerField(
        source="link_count", help_text="Your links carrying it (archived and stopped included)."
    )


class TagRenameSerializer(serializers.Serializer):
    """The body of PATCH /api/v1/tags/{tag}/ (the tag rules are the service's: clean_tags)."""

    name = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text="The new name (trimmed; at most 50 characters, no commas). The name of another "
        "tag of the workspace, any case, merges this one into it.",
    )


class TagRenamedSerializer(TagSerializer):
    """A renamed tag: a tag of GET /api/v1/tags/, and whether it was merged into another."""

    merged = serializers.BooleanField(
        help_text="True when the workspace already had a tag of that name: this tag's links now "
        "carry that one (which kept its spelling), and this tag is gone."
    )
