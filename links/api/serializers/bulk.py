"""POST /api/v1/links/bulk/: its request, as read and as documented, and its answer."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictCharField
from links.api.serializers.inputs import CREATE_WORKSPACE_HELP, LinkCreateSerializer
from links.api.serializers.links import LinkSerializer, _warnings_field
from links.services.bulk import BULK_MAX_ITEMS


class _BulkItemField(serializers.Field):
    """An item as the JSON parser gave it (checked by the view, one by one); null is refused,
    as a JSONField refuses it, without JSONField re-encoding every item to check it is JSON."""

    def to_internal_value(self, data):
        return data


def bulk_workspace_field() -> StrictCharField:
    """A bulk call's one `workspace`, for every item."""
    return StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=50,
        help_text="For every item: " + CREATE_WORKSPACE_HELP,
    )


class BulkRequestSerializer(serializers.Serializer):
    """POST /api/v1/links/bulk/: the items are checked one by one by the view."""

    items = serializers.ListField(
        child=_BulkItemField(),
        allow_empty=False,
        max_length=BULK_MAX_ITEMS,
        help_text=f"1 to {BULK_MAX_ITEMS} links, each shaped like the body of POST /links/.",
        error_messages={
            "empty": "Send at least one URL.",
            "max_length": f"Send at most {BULK_MAX_ITEMS} URLs per call.",
        },
    )
    workspace = bulk_workspace_field()


class BulkRequestDocSerializer(serializers.Serializer):
    """The bulk request as documented: every item is a POST /links/ body.

    Input is read with BulkRequestSerializer, which leaves items unchecked so that one bad
    item is reported in its own result instead of refusing the whole call.
    """

    items = LinkCreateSerializer(many=True, allow_empty=False, max_length=BULK_MAX_ITEMS)
    workspace = bulk_workspace_field()


class BulkItemResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the item in the request.")
    status = serializers.IntegerField(
        help_text="201 created, 200 your existing link for the same URL, 400 refused."
    )
    link = LinkSerializer(allow_null=True, help_text="The link; null when refused.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        allow_null=True,
        help_text='Why the item was refused, as {"field": ["message"]}; null on success.',
    )
    warnings = _warnings_field()


class BulkResponseSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Items that made a new link.")
    existing = serializers.IntegerField(help_text="Items answered with an existing link.")
    failed = serializers.IntegerField(help_text="Items refused; see their errors.")
    results = BulkItemResultSerializer(many=True)
