"""/api/v1/links/bulk/: POST's request (as read and as documented) and answer; PATCH's."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictBooleanField, StrictCharField
from links.api.serializers.inputs import CREATE_WORKSPACE_HELP, LinkCreateSerializer, TagsField
from links.api.serializers.links import LinkSerializer, _warnings_field
from links.services.bulk import BULK_MAX_ITEMS
from links.services.bulk_change import (
    BULK_CHANGE_MAX,
    BULK_CHANGES,
    CHANGED,
    REFUSED,
    UNCHANGED,
)


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


# --- PATCH /api/v1/links/bulk/: the same change for many links ---------------------------------


class BulkChangeSetSerializer(serializers.Serializer):
    """What a bulk change sets, the same for every link (links.services.bulk_change)."""

    tags = TagsField(
        required=False, help_text="Replaces each link's tags (an empty list takes them all off)."
    )
    add_tags = TagsField(required=False, help_text="Added to each link's own tags.")
    archived = StrictBooleanField(
        required=False, help_text="true archives (hidden from the default list), false restores."
    )
    revoked = StrictBooleanField(
        required=False, help_text="Only true: each link answers 410 from the next click, for good."
    )
    expires_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="Each link's new expiry (ISO 8601, in the future); null for never.",
    )
    workspace = StrictCharField(
        required=False,
        max_length=50,
        help_text=(
            "Moves each link to this workspace (its slug), keeping its tags' names; you must be "
            "an owner or editor of both."
        ),
    )

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(str(name) for name in set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Not something a bulk change sets."] for name in unknown}
                )
        return super().to_internal_value(data)

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError(
                {"non_field_errors": [f"Say what to change: one or more of {BULK_CHANGES}."]}
            )
        return attrs


class BulkChangeRequestSerializer(serializers.Serializer):
    codes = serializers.ListField(
        child=StrictCharField(max_length=100),
        allow_empty=False,
        max_length=BULK_CHANGE_MAX,
        help_text=(
            f"1 to {BULK_CHANGE_MAX} short codes (on the default domain, else the only one you "
            "have the code on); a code given twice is answered once."
        ),
        error_messages={
            "empty": "Name at least one link.",
            "max_length": f"Change at most {BULK_CHANGE_MAX} links per call.",
        },
    )
    set = BulkChangeSetSerializer(help_text="What to change, the same for every link.")


class BulkChangeResultSerializer(serializers.Serializer):
    code = serializers.CharField()
    outcome = serializers.ChoiceField(
        choices=[CHANGED, UNCHANGED, REFUSED],
        help_text="changed; unchanged (it already was so); refused (see errors).",
    )
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        allow_null=True,
        help_text=(
            'Why it was refused, as {"field": ["message"]}: `code` when the link is not found '
            "or you may only view it, else the field whose rule refused it; null otherwise."
        ),
    )


class BulkChangeResponseSerializer(serializers.Serializer):
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    refused = serializers.IntegerField()
    results = BulkChangeResultSerializer(many=True)
