from django import forms

from .models import ApiKey


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=ApiKey._meta.get_field("name").max_length,
        help_text="What will use it, e.g. “Newsletter tool”.",
        error_messages={"required": "Give the key a name, e.g. the tool that will use it."},
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
