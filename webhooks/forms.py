from django import forms

from webhooks.models import WebhookEvent


class WebhookCreateForm(forms.Form):
    url = forms.CharField(
        label="URL",
        max_length=2048,
        help_text="Where the POSTs go: an https:// URL of your server.",
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/shorturl-hook"}),
        error_messages={"required": "Enter the URL that should receive the webhook."},
    )
    events = forms.MultipleChoiceField(
        label="Events",
        choices=WebhookEvent.choices,
        initial=[WebhookEvent.LINK_CREATED, WebhookEvent.LINK_UPDATED, WebhookEvent.LINK_REVOKED],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one event."},
    )
