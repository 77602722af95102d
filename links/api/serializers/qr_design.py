"""The QR design of GET/PUT/DELETE /api/v1/links/{code}/qr-design/ (links.services.qr_design
holds the rules; these only read the request's shape)."""

from __future__ import annotations

import base64
import binascii

from rest_framework import serializers

from core.api.fields import StrictBooleanField, StrictCharField
from links.models import QrErrorLevel
from links.services.qr_design import LOGO_MAX_BYTES


class QrDesignSerializer(serializers.Serializer):
    """A link's QR design as the API answers it."""

    foreground = serializers.CharField(help_text="Colour of the code's modules, `#rrggbb`.")
    background = serializers.CharField(help_text="Background colour, `#rrggbb`.")
    error_level = serializers.ChoiceField(
        choices=QrErrorLevel.choices, help_text="Error correction: l, m, q or h (h with a logo)."
    )
    has_logo = serializers.BooleanField(help_text="Whether a centre logo is drawn.")
    designed = serializers.BooleanField(help_text="false: the plain black-on-white code.")
    png_url = serializers.CharField(help_text="The designed code as PNG (the QR endpoint).")
    svg_url = serializers.CharField(help_text="The designed code as SVG (the QR endpoint).")


def _colour(help_text: str):
    return StrictCharField(required=False, max_length=7, help_text=help_text)


class QrDesignJsonSerializer(serializers.Serializer):
    """PUT body as JSON (each field its JSON type: no "true" for true)."""

    foreground = _colour("Colour of the code's modules, `#rrggbb`.")
    background = _colour("Background colour, `#rrggbb`.")
    error_level = serializers.ChoiceField(
        choices=QrErrorLevel.choices,
        required=False,
        help_text="l, m, q or h (a logo makes it h).",
        error_messages={"invalid_choice": "Choose an error-correction level: l, m, q or h."},
    )
    logo_base64 = StrictCharField(
        required=False,
        help_text=f"The PNG or SVG logo's bytes in base64 (at most {LOGO_MAX_BYTES // 1024} KB "
        "decoded).",
    )
    logo_name = StrictCharField(
        required=False,
        max_length=200,
        default="",
        help_text="The logo's file name (`brand.svg`): an SVG is also told by its content.",
    )
    remove_logo = StrictBooleanField(required=False, default=False, help_text="true: drop it.")

    def validate_logo_base64(self, value: str) -> bytes:
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise serializers.ValidationError("Not base64.") from None


class QrDesignUploadSerializer(serializers.Serializer):
    """PUT body as multipart/form-data, to upload the logo as a file (form values are text)."""

    foreground = serializers.CharField(required=False, max_length=7)
    background = serializers.CharField(required=False, max_length=7)
    error_level = serializers.ChoiceField(
        choices=QrErrorLevel.choices,
        required=False,
        error_messages={"invalid_choice": "Choose an error-correction level: l, m, q or h."},
    )
    logo = serializers.FileField(
        required=False,
        help_text=f"A PNG or SVG file, at most {LOGO_MAX_BYTES // 1024} KB.",
    )
    remove_logo = serializers.BooleanField(required=False, default=False)
