"""The workspace pages' forms: shape only; workspaces.services has the final word."""

from django import forms

from workspaces.models import Role


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
