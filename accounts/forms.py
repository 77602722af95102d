from datetime import datetime, timedelta

from django import forms
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from accounts import services
from accounts.models import ApiKey, all_scopes
from core.api.scopes import ApiScope
from core.api.throttles import MAX_KEY_RATE

# Lifetimes offered for a new key, in days ("" never expires).
KEY_LIFETIMES = [("", "Never"), ("30", "30 days"), ("90", "90 days"), ("365", "1 year")]


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=ApiKey._meta.get_field("name").max_length,
        help_text="What will use it, e.g. “Newsletter tool”.",
        error_messages={"required": "Give the key a name, e.g. the tool that will use it."},
    )
    scopes = forms.MultipleChoiceField(
        label="It may",
        choices=ApiScope.choices,
        initial=all_scopes,
        widget=forms.CheckboxSelectMultiple,
        help_text="Give a tool only what it needs: a request outside these is refused (403).",
        error_messages={"required": "Give the key at least one scope."},
    )
    expires_in = forms.ChoiceField(
        label="Expires after", choices=KEY_LIFETIMES, required=False, initial=""
    )
    rate_limit = forms.IntegerField(
        label="Requests per minute",
        required=False,
        min_value=1,
        max_value=MAX_KEY_RATE,
        help_text="Past it the key is answered 429 until the minute turns. Empty: the "
        "workspace's default.",
    )

    def expires_at(self) -> datetime | None:
        days = self.cleaned_data.get("expires_in")
        return timezone.now() + timedelta(days=int(days)) if days else None


class ApiKeyRateLimitForm(forms.Form):
    rate_limit = forms.IntegerField(
        label="Requests per minute", required=False, min_value=1, max_value=MAX_KEY_RATE
    )


class TimeZoneForm(forms.Form):
    time_zone = forms.ChoiceField(
        label="Time zone",
        required=False,
        help_text="Every time you see or enter is in this zone.",
    )

    def __init__(self, *args, zone_names: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = [
            ("", "Your browser's time zone"),
            *[(name, name.replace("_", " ")) for name in zone_names],
        ]


class GuardedPasswordChangeForm(PasswordChangeForm):
    """Django's password change, its old password checked through services.password_check:
    counted toward the sign-in lockout, and refused while the user's checks are paused
    (services.PasswordChecksPaused propagates out of is_valid() to the view)."""

    def __init__(self, user, *args, request: HttpRequest, **kwargs):
        super().__init__(user, *args, **kwargs)
        self.request = request

    @sensitive_variables("old_password")
    def clean_old_password(self) -> str:
        old_password = self.cleaned_data["old_password"]
        if not services.password_check(request=self.request, user=self.user, password=old_password):
            raise forms.ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old_password
