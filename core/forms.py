"""What every HTML form of the product shares."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError


def add_service_errors(
    form: forms.Form, error: ValidationError, *, renamed: dict[str, str] | None = None
) -> None:
    """Show a service's ValidationError ({field: [messages]}) beside the matching fields
    (`renamed`: {the service's name: the form's} where they differ), the rest above the form."""
    if hasattr(error, "error_dict"):
        for field, messages in error.message_dict.items():
            field = (renamed or {}).get(field, field)
            form.add_error(field if field in form.fields else None, messages)
    else:
        form.add_error(None, error.messages)
