"""DRF fields that take only what they say: no silent coercion of other JSON types.

DRF's own fields turn `123` into "123" and "yes" into True; an API that means what it documents
refuses them with 400 naming the field instead.
"""

from __future__ import annotations

from rest_framework import serializers

BOOLEAN_MESSAGE = "Use true or false."


class StrictCharField(serializers.CharField):
    """A JSON string, not a number or boolean quietly turned into one."""

    default_error_messages = {"invalid": "Enter text (a JSON string)."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """One of integer choices, sent as a JSON number (not "302" or true)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false, not 0, 1 or "yes" quietly turned into one."""

    default_error_messages = {"invalid": BOOLEAN_MESSAGE}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON number without a fraction, not "10" or true quietly turned into one."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)
