"""The domains API: a short domain."""

from __future__ import annotations

from rest_framework import serializers


class DomainSerializer(serializers.Serializer):
    """A short domain of GET /api/v1/domains/."""

    host = serializers.CharField(
        help_text="What `domain` takes on POST /links/ and the links show."
    )
    is_default = serializers.BooleanField(help_text="Links go here when no domain is given.")
