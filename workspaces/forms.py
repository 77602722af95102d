"""The workspace pages' forms: shape only; workspaces.services has the final word."""

from django import forms

from core.api.throttles import MAX_KEY_RATE
from workspaces.models import Privacy, Role


class WorkspaceCreateForm(forms.Form):
    name = forms.CharField(label="Name", max_length=100, help_text="e.g. Marketing team.")
    slug = forms.CharField(
        label="Slug",
        max_length=50,
        required=False,
        help_text="Optional: letters, digits, “-” and “_”; made from the name when empty.",
    )


class MemberAddForm(forms.Form):
    username = forms.CharField(label="Username or email", max_length=254)
    role = forms.ChoiceField(label="Role", choices=Role.choices, initial=Role.EDITOR)


class RetentionForm(forms.Form):
    raw_retention_days = forms.IntegerField(
        label="Keep raw visits for (days)",
        required=False,
        min_value=0,
        help_text="Each click's IP address, browser and referrer are deleted after this many "
        "days; totals, unique visitors and charts are kept for good. Empty: the install's "
        "setting. 0: deleted at the next hourly pass.",
    )


class ApiRateLimitForm(forms.Form):
    # Only read here: the range is the service's (core.api.throttles.key_rate_problem).
    api_rate_limit = forms.IntegerField(
        label="Requests per minute for each key",
        required=False,
        error_messages={"invalid": "A whole number of requests per minute, or none."},
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_KEY_RATE, "inputmode": "numeric"}),
        help_text="The default for this workspace's API keys that set no limit of their own; "
        "past it a key is answered 429 until the minute turns. Empty: only the API's overall "
        "rates.",
    )


class AuditFilterForm(forms.Form):
    """The audit log page's filters (GET): what audit.selectors.audit_entries takes."""

    action = forms.ChoiceField(label="Action", required=False)
    actor = forms.CharField(label="Who", max_length=150, required=False)
    object = forms.CharField(
        label="Object", max_length=200, required=False, help_text="A link's code, a tag's name…"
    )
    since = forms.DateField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label="To", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args, actions: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [("", "Any action")] + [(a, a) for a in actions]


class PrivacyForm(forms.Form):
    analytics_privacy = forms.ChoiceField(
        label="Visitor privacy",
        required=False,
        help_text="What visits stored from now on keep of their visitors. Visits stored before "
        "keep what they have, and no total changes.",
    )

    def __init__(self, *args, default_mode: str, **kwargs):
        super().__init__(*args, **kwargs)
        default_label = dict(Privacy.choices)[default_mode].split(":")[0]
        self.fields["analytics_privacy"].choices = [
            ("", f"This site's default ({default_label.lower()})"),
            *Privacy.choices,
        ]
