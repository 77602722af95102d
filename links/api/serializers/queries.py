"""The query strings of the links API's list and QR code."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import BOOLEAN_MESSAGE
from links import qr
from links.models import HealthStatus, LinkStatus


class LinkListQuerySerializer(serializers.Serializer):
    """Query string of GET /api/v1/links/ (pagination's own parameters are checked here too)."""

    search = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        help_text="Part of the long URL or title, or the exact code.",
    )
    active = serializers.BooleanField(
        required=False,
        default=None,
        help_text="true: only working links; false: every other one (scheduled: not started "
        "yet; revoked, expired or out of visits: limit_reached).",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    status = serializers.ChoiceField(
        choices=LinkStatus.choices,
        required=False,
        help_text="Only the links in this state (the links' `status`), e.g. `scheduled`.",
        error_messages={
            "invalid_choice": "Choose one of " + ", ".join(LinkStatus.values) + ".",
        },
    )
    health = serializers.ChoiceField(
        choices=HealthStatus.choices,
        required=False,
        help_text="Only the links whose destination health is this (`health.status`), e.g. "
        "`broken`.",
        error_messages={
            "invalid_choice": "Choose one of " + ", ".join(HealthStatus.values) + ".",
        },
    )
    mine = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Staff only: true lists just your own links instead of everyone's.",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    tag = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only links with this tag (any case); repeat it for links with every one.",
    )
    exclude_tag = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Leave out the links with this tag (any case); repeat it to leave out the "
        "links with any of them.",
    )
    archived = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: archived links are listed too (they are left out by default).",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    domain = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="Only the links on this short domain (its host; GET /api/v1/domains/).",
    )
    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Only the links of this workspace (its slug; GET /api/v1/workspaces/). "
        "Without it: the links of every workspace you belong to (an API key: its own "
        "workspace's). A workspace you do not belong to is a 404.",
    )
    page = serializers.IntegerField(
        required=False, min_value=1, error_messages={"invalid": "Use a page number (1, 2, …)."}
    )
    page_size = serializers.IntegerField(
        required=False,
        min_value=1,
        error_messages={"invalid": "Use a number of links per page (at most 500)."},
    )


class QrQuerySerializer(serializers.Serializer):
    """Query string of GET /api/v1/links/{code}/qr/."""

    format = serializers.ChoiceField(
        choices=qr.FORMATS,
        required=False,
        default="png",
        help_text="`png` (default) or `svg` (a vector drawing: any size, no `size` needed).",
        error_messages={"invalid_choice": "Choose png or svg."},
    )
    size = serializers.ChoiceField(
        choices=list(qr.SIZES),
        required=False,
        help_text="PNG width and height in pixels: "
        + "; ".join(size.label for size in qr.SIZES.values())
        + ". Without it, 10 pixels a module (about 370 px).",
        error_messages={
            "invalid_choice": f"Choose a size of {qr.SIZE_CHOICES_TEXT} (pixels wide)."
        },
    )
