"""HTML forms for marketers. They check shape only; links.services has the final word on content."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.template.defaultfilters import pluralize
from django.utils import timezone
from django.utils.functional import lazy

from links.imports.formats import FORMATS
from links.models import (
    CLICK_ID_PARAM,
    LinkStatus,
    QrErrorLevel,
    RedirectType,
    UrlLink,
    tag_key,
)
from links.selectors import DEFAULT_ORDER, LINK_ORDERS, STOPPED
from links.services.targeting import DEVICES, MAX_CITY, MAX_VARIANTS, OS_NAMES, query_text
from links.services.utm import UTM_FIELDS, UTM_MAX_LENGTH, utm_in_url


def _fallback_help() -> str:
    """The failover's help text, from the checker's settings (LINK_CHECK_OK_SECONDS,
    LINK_CHECK_FAILURES) as this deployment has them."""
    minutes = round(settings.LINK_CHECK_OK_SECONDS / 60)
    failures = settings.LINK_CHECK_FAILURES
    in_a_row = "once" if failures == 1 else f"{failures} times in a row"
    return (
        f"Optional. The link's destinations are checked regularly (about every {minutes} "
        f"minute{pluralize(minutes)}); once one fails {in_a_row} (an error page, no answer), "
        "visitors go here instead, until it works again."
    )


# `<input type="datetime-local">` sends this; the others are for people typing by hand.
DATETIME_INPUT_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"]

# The web UI offers the two redirects marketers choose between; the API offers all four.
UI_REDIRECT_CHOICES = [
    (RedirectType.FOUND.value, "Temporary (302, default): every click is counted"),
    (
        RedirectType.MOVED_PERMANENTLY.value,
        "Permanent (301): browsers may remember it and skip us, so repeat clicks go uncounted",
    ),
]


class ExpiryField(forms.DateTimeField):
    widget = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")

    def __init__(self, **kwargs):
        kwargs.setdefault("input_formats", DATETIME_INPUT_FORMATS)
        kwargs.setdefault(
            "error_messages", {"invalid": "Enter a date and time, e.g. 2030-12-31 18:00."}
        )
        super().__init__(**kwargs)

    def has_changed(self, initial, data) -> bool:
        # The widget shows minutes only; unchanged seconds must not count as an edit.
        if isinstance(initial, datetime):
            initial = initial.replace(second=0, microsecond=0)
        return super().has_changed(initial, data)


class RuleMomentField(forms.DateTimeField):
    """A rule's `after` or `before`, in the person's time zone, to the second: a moment set
    through the API keeps its seconds when the form is saved again."""

    widget = forms.DateTimeInput(
        attrs={"type": "datetime-local", "step": 1}, format="%Y-%m-%dT%H:%M:%S"
    )

    def __init__(self, **kwargs):
        kwargs.setdefault("input_formats", DATETIME_INPUT_FORMATS)
        kwargs.setdefault(
            "error_messages", {"invalid": "Enter a date and time, e.g. 2030-12-31 18:00."}
        )
        super().__init__(**kwargs)


def _stored_moment(text: str | None) -> datetime | None:
    """A stored rule moment ("2026-05-01T07:00:00Z") as the aware datetime a form shows."""
    return datetime.fromisoformat(text) if text else None


class LinkFieldsMixin(forms.Form):
    """Fields shared by the create and edit forms."""

    long_url = forms.CharField(
        label="Long URL",
        max_length=4096,  # the service gives the friendly limit message; this stops abuse
        widget=forms.TextInput(
            attrs={
                "type": "url",
                "placeholder": "https://example.com/spring-sale?utm_source=newsletter",
                "autocomplete": "off",
                "inputmode": "url",
            }
        ),
        error_messages={"required": "Enter the long URL to shorten."},
    )
    title = forms.CharField(
        label="Title",
        required=False,
        max_length=UrlLink._meta.get_field("title").max_length,  # the rule is validate_title's
        help_text="Optional. Only you see it, in your list of links.",
        error_messages={"max_length": "Keep the title to %(limit_value)d characters or fewer."},
    )
    # The start and the expiry side by side, the same widget: the window the link works in.
    valid_since = ExpiryField(label="Starts", required=False)
    expires_at = ExpiryField(label="Expires", required=False)
    redirect_type = forms.TypedChoiceField(
        label="Redirect type",
        choices=UI_REDIRECT_CHOICES,
        coerce=int,
        initial=RedirectType.FOUND.value,
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "Choose temporary (302) or permanent (301)."},
    )
    pass_query = forms.BooleanField(
        label="Pass the query string on",
        required=False,
        initial=True,
        help_text=(
            "A visitor's ?utm_source=… is added to the long URL (the long URL's own values win)."
        ),
    )
    track_conversions = forms.BooleanField(
        label="Track conversions",
        required=False,
        help_text=(
            f"A click id (?{CLICK_ID_PARAM}=…) is added to the long URL, so the leads and sales "
            "your site reports with it count for this link."
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        zone = timezone.get_current_timezone_name()
        self.fields["valid_since"].help_text = (
            f"Optional. Until this moment the short link answers “not live yet”; then it "
            f"works by itself. Times are in {zone}."
        )
        self.fields["expires_at"].help_text = (
            f"Optional. After this moment the short link answers “no longer available”. "
            f"Times are in {zone}."
        )


def split_tags(value: str) -> list[str]:
    """`spring, Newsletter ,` as typed in a form → ["spring", "Newsletter"]; the rules are
    links.services.tags.clean_tags's."""
    return [name.strip() for name in (value or "").split(",") if name.strip()]


_UTM_LABELS = {
    "utm_source": ("Source", "newsletter"),
    "utm_medium": ("Medium", "email"),
    "utm_campaign": ("Campaign", "spring-sale"),
    "utm_term": ("Term", "running shoes"),
    "utm_content": ("Content", "header-button"),
}


class LinkOptionsMixin(forms.Form):
    """Tags and the UTM builder of the "Advanced" section, on the create and edit forms."""

    tags = forms.CharField(
        label="Tags",
        required=False,
        max_length=2000,  # 20 tags of 50 characters and their commas; the service has the rule
        help_text="Optional. Separate tags with commas, e.g. spring, newsletter.",
        widget=forms.TextInput(
            attrs={"list": "tag-suggestions", "autocomplete": "off", "data-tags-input": ""}
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in UTM_FIELDS:
            label, example = _UTM_LABELS[name]
            self.fields[name] = forms.CharField(
                label=f"{label} ({name})",
                required=False,
                max_length=UTM_MAX_LENGTH,
                widget=forms.TextInput(
                    attrs={"placeholder": example, "autocomplete": "off", "data-utm": name}
                ),
            )

    def clean_tags(self) -> list[str]:
        return split_tags(self.cleaned_data["tags"])

    @property
    def utm_fields(self) -> list:
        return [self[name] for name in UTM_FIELDS]

    def utm(self) -> dict[str, str]:
        return {name: self.cleaned_data.get(name) or "" for name in UTM_FIELDS}


def _destination_field(
    label: str, placeholder: str, *, initial: str = "", help_text: str = ""
) -> forms.CharField:
    """An optional URL input that another destination goes in (a fallback, a failover, a rule's
    or a variant's URL): links.services.policy checks it as it checks long_url."""
    return forms.CharField(
        label=label,
        required=False,
        max_length=4096,
        initial=initial,
        help_text=help_text,
        widget=forms.TextInput(
            attrs={
                "type": "url",
                "inputmode": "url",
                "autocomplete": "off",
                "placeholder": placeholder,
            }
        ),
    )


class GateFieldsMixin(forms.Form):
    """Password and visit cap (#15 gates), shared by the create and edit forms. Lengths and
    bounds here only shape the input: links.services.gates has the rules."""

    password = forms.CharField(
        label="Password",
        required=False,
        strip=False,  # spaces are part of a password
        max_length=512,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Optional. Visitors must type it before they are sent on (4–128 characters).",
    )
    max_visits = forms.IntegerField(
        label="Visit limit",
        required=False,
        min_value=1,
        help_text=(
            "Optional. After this many clicks by people the link stops working. Only people "
            "are sent on: link previews and checkers get a page without the destination."
        ),
        error_messages={
            "min_value": "A visit limit must be at least 1 (leave it empty for none).",
            "invalid": "Enter a whole number of visits.",
        },
    )
    # The fallback (issue #28): checked by links.services.policy.validate_optional_url.
    expired_url = _destination_field(
        "Once stopped, send visitors to",
        "https://example.com/offer-ended",
        help_text=(
            "Optional. Once the link has expired, been revoked or reached its visit limit, "
            "visitors go here instead of a “link has expired” page; they still count as the "
            "link's clicks (never toward its limit). Not before its start."
        ),
    )
    # Failover (issue #29): checked by links.services.policy.validate_optional_url.
    fallback_url = _destination_field(
        "While the destination is broken, send visitors to",
        "https://example.com/offers",
        help_text=lazy(_fallback_help, str)(),
    )


def _field_group(names: tuple[str, ...]) -> tuple[property, property, Callable]:
    """A folded group of optional fields on the create and edit forms (the social preview, the
    app links), as a form's members: its bound fields (for the template), whether it starts open
    (it holds a value or an error), and its cleaned values for the services ("" for empty)."""

    def fields(form: forms.Form) -> list:
        return [form[name] for name in names]

    def starts_open(form: forms.Form) -> bool:
        return any(form[name].errors or form[name].value() for name in names)

    def values(form: forms.Form) -> dict[str, str]:
        return {name: form.cleaned_data.get(name) or "" for name in names}

    return property(fields), property(starts_open), values


class PreviewFieldsMixin(forms.Form):
    """The "Social preview" group of the create and edit forms (issue #28): what link-preview
    fetchers show when the link is shared. Lengths here only shape the input:
    links.services.previews has the rules (the image through the long-URL policy)."""

    og_title = forms.CharField(
        label="Preview title",
        required=False,
        max_length=200,
        help_text="Optional. The headline shown when the link is shared (at most 200 characters).",
    )
    og_description = forms.CharField(
        label="Preview description",
        required=False,
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Optional. A line or two under the headline (at most 500 characters).",
    )
    og_image = forms.CharField(
        label="Preview image URL",
        required=False,
        max_length=2048,
        widget=forms.TextInput(attrs={"inputmode": "url", "placeholder": "https://"}),
        help_text="Optional. An https:// address of the picture to show (1200 × 630 suits most).",
    )

    PREVIEW_FIELDS = ("og_title", "og_description", "og_image")
    preview_fields, preview_open, preview = _field_group(PREVIEW_FIELDS)


def _app_url_field(label: str, placeholder: str, help_text: str) -> forms.CharField:
    """An app deep link's input: any scheme may be typed (type=text, not url: a browser would
    refuse `myapp://`); links.services.app_links says what is stored."""
    return forms.CharField(
        label=label,
        required=False,
        max_length=2048,
        widget=forms.TextInput(
            attrs={
                "inputmode": "url",
                "autocomplete": "off",
                "spellcheck": "false",
                "placeholder": placeholder,
            }
        ),
        help_text=help_text,
    )


class AppLinkFieldsMixin(forms.Form):
    """The "App links" group of the create and edit forms (issue #28): where a visitor on iOS
    (iPadOS too) or on Android is sent when no rule took them. Lengths here only shape the
    input: links.services.app_links has the rules."""

    ios_url = _app_url_field(
        "iOS URL",
        "myapp://product/7",
        "Optional. Where iPhone and iPad visitors go instead of the long URL.",
    )
    android_url = _app_url_field(
        "Android URL",
        "https://shop.example.com/app/product/7",
        "Optional. Where Android visitors go instead of the long URL.",
    )

    APP_LINK_FIELDS = ("ios_url", "android_url")

    app_link_fields, app_links_open, app_links = _field_group(APP_LINK_FIELDS)


# --- Rules and A/B variants (issue #15) ------------------------------------------------------
# A fixed number of rows of plain inputs, so the editor works without JavaScript: empty rows are
# ignored, and links.services.targeting has the final word on every value. Its errors name the
# item by its place among the filled rows ("rules[1].country: …"); they are shown beside the row
# (and the field) the person filled in.

RULE_ROWS = 3  # an edit form shows one more than the link's rules (the API allows up to 20)
VARIANT_ROWS = MAX_VARIANTS
# Each rule row: these on its first line, the rest behind "More conditions", then its URL.
_RULE_MAIN_FIELDS = ("device", "os", "country", "language")
_RULE_MORE_FIELDS = ("city", "query", "ip", "after", "before")
_RULE_FIELDS = (*_RULE_MAIN_FIELDS, *_RULE_MORE_FIELDS, "url")
_VARIANT_FIELDS = ("url", "weight")
_ITEM_ERROR = re.compile(
    r"(?P<group>rules|variants)\[(?P<index>\d+)\](?:\.(?P<key>\w+))?: (?P<text>.*)", re.S
)


def _short_text(label: str, initial: str, placeholder: str, **kwargs) -> forms.CharField:
    """A condition typed as text (the service checks and spells it)."""
    return forms.CharField(
        label=label,
        required=False,
        initial=initial,
        widget=forms.TextInput(attrs={"placeholder": placeholder, "autocomplete": "off"}),
        **kwargs,
    )


class TargetingFieldsMixin(forms.Form):
    """The rules and variants rows of the create and edit forms (templates/links/
    _targeting_fields.html). Call `setup_targeting()` from __init__; `targeting()` gives the
    lists for the service, `add_targeting_errors()` puts the service's refusal beside the rows."""

    def setup_targeting(self, *, rules: list | None = None, variants: list | None = None) -> None:
        rules, variants = list(rules or ()), list(variants or ())
        self.rule_count = max(RULE_ROWS, len(rules) + 1)
        for row in range(self.rule_count):
            initial = rules[row] if row < len(rules) else {}
            self.fields[f"rule_{row}_device"] = forms.ChoiceField(
                label="Device",
                required=False,
                choices=[("", "Any device"), *((name, name.title()) for name in DEVICES)],
                initial=initial.get("device", ""),
            )
            self.fields[f"rule_{row}_os"] = forms.ChoiceField(
                label="OS",
                required=False,
                choices=[("", "Any OS"), *((name, name) for name in OS_NAMES)],
                initial=initial.get("os", ""),
            )
            self.fields[f"rule_{row}_country"] = forms.CharField(
                label="Country",
                required=False,
                max_length=2,
                initial=initial.get("country", ""),
                widget=forms.TextInput(
                    attrs={"placeholder": "e.g. CN", "autocomplete": "off", "size": 4}
                ),
            )
            self.fields[f"rule_{row}_language"] = forms.CharField(
                label="Language",
                required=False,
                max_length=35,  # a whole tag such as zh-Hant-TW, refused with a hint by the service
                initial=initial.get("language", ""),
                widget=forms.TextInput(
                    attrs={"placeholder": "e.g. zh", "autocomplete": "off", "size": 4}
                ),
            )
            self.fields[f"rule_{row}_city"] = _short_text(
                "City",
                initial.get("city", ""),
                "e.g. London",
                max_length=MAX_CITY * 2,  # the service says why a name is too long
            )
            self.fields[f"rule_{row}_query"] = _short_text(
                "Query string",
                query_text(initial["query"]) if initial.get("query") else "",
                "e.g. utm_source=mail",
                max_length=4096,
                help_text="name=value; name=* for any value; name alone for none. & between.",
            )
            self.fields[f"rule_{row}_ip"] = _short_text(
                "IP address or network",
                initial.get("ip", ""),
                "e.g. 203.0.113.0/24",
                max_length=100,
            )
            self.fields[f"rule_{row}_after"] = RuleMomentField(
                label="After", required=False, initial=_stored_moment(initial.get("after"))
            )
            self.fields[f"rule_{row}_before"] = RuleMomentField(
                label="Before", required=False, initial=_stored_moment(initial.get("before"))
            )
            self.fields[f"rule_{row}_url"] = _destination_field(
                "Send to", "https://example.com/cn", initial=initial.get("url", "")
            )
        for row in range(VARIANT_ROWS):
            initial = variants[row] if row < len(variants) else {}
            letter = chr(ord("A") + row)
            self.fields[f"variant_{row}_url"] = _destination_field(
                "URL", f"https://example.com/{letter.lower()}", initial=initial.get("url", "")
            )
            self.fields[f"variant_{row}_weight"] = forms.IntegerField(
                label="Weight (%)",
                required=False,
                min_value=1,
                max_value=100,
                initial=initial.get("weight"),
                widget=forms.NumberInput(attrs={"min": 1, "max": 100, "placeholder": "50"}),
                error_messages={
                    "invalid": "Give a whole number from 1 to 100.",
                    "min_value": "Give a whole number from 1 to 100.",
                    "max_value": "Give a whole number from 1 to 100.",
                },
            )
        self.targeting_errors: dict[str, list[str]] = {"rules": [], "variants": []}
        self.row_errors: dict[str, list[str]] = {}

    def _filled(self, prefix: str, count: int, keys: tuple[str, ...]) -> list[tuple[int, dict]]:
        """(row, {key: value}) of the rows with anything in them, in order."""
        rows = []
        for row in range(count):
            values = {key: self.cleaned_data.get(f"{prefix}_{row}_{key}") for key in keys}
            given = {key: value for key, value in values.items() if value not in (None, "")}
            if given:
                rows.append((row, given))
        return rows

    def targeting(self) -> dict[str, list[dict]]:
        """{"rules": [...], "variants": [...]} from the filled rows, as the API takes them."""
        return {
            "rules": [given for _, given in self._filled("rule", self.rule_count, _RULE_FIELDS)],
            "variants": [
                given for _, given in self._filled("variant", VARIANT_ROWS, _VARIANT_FIELDS)
            ],
        }

    def targeting_changed(self) -> bool:
        return any(name.startswith(("rule_", "variant_")) for name in self.changed_data)

    def add_targeting_errors(self, error: ValidationError) -> ValidationError | None:
        """Show the service's `rules`/`variants` problems beside their rows (and fields); the
        rest of the error (other fields'), or None when nothing else was wrong."""
        if not hasattr(error, "error_dict"):
            return error
        rest = {}
        rows = {
            "rules": [row for row, _ in self._filled("rule", self.rule_count, _RULE_FIELDS)],
            "variants": [row for row, _ in self._filled("variant", VARIANT_ROWS, _VARIANT_FIELDS)],
        }
        for group, messages in error.message_dict.items():
            if group not in rows:
                rest[group] = messages
                continue
            prefix = "rule" if group == "rules" else "variant"
            for message in messages:
                match = _ITEM_ERROR.fullmatch(message)
                if match is None or int(match["index"]) >= len(rows[group]):
                    self.targeting_errors[group].append(message.removeprefix(f"{group}: "))
                    continue
                row, text = rows[group][int(match["index"])], match["text"]
                field = f"{prefix}_{row}_{match['key']}"
                if match["key"] and field in self.fields:
                    self.add_error(field, text)
                else:
                    self.row_errors.setdefault(f"{prefix}_{row}", []).append(text)
        if any(self.targeting_errors.values()) or self.row_errors:
            # Keep the form invalid even when every problem is a row's or the group's.
            self.add_error(None, "Check the rules and variants below.")
        return ValidationError(rest) if rest else None

    def rule_rows(self) -> list[dict]:
        rows = []
        for row in range(self.rule_count):
            more = [self[f"rule_{row}_{key}"] for key in _RULE_MORE_FIELDS]
            rows.append(
                {
                    "label": f"Rule {row + 1}",
                    "fields": [self[f"rule_{row}_{key}"] for key in _RULE_MAIN_FIELDS],
                    "more": more,
                    # Open when it holds anything: a condition set, or a problem with one.
                    "more_open": any(
                        field.errors or field.value() not in (None, "") for field in more
                    ),
                    "url": self[f"rule_{row}_url"],
                    "errors": self.row_errors.get(f"rule_{row}", []),
                }
            )
        return rows

    def variant_rows(self) -> list[dict]:
        return [
            {
                "label": f"Variant {chr(ord('A') + row)}",
                "fields": [self[f"variant_{row}_{key}"] for key in _VARIANT_FIELDS],
                "errors": self.row_errors.get(f"variant_{row}", []),
            }
            for row in range(VARIANT_ROWS)
        ]

    def targeting_open(self) -> bool:
        """Open the block when it holds anything (an edited link's rules, or problems)."""
        names = [name for name in self.fields if name.startswith(("rule_", "variant_"))]
        return bool(
            any(self.targeting_errors.values())
            or self.row_errors
            or any(self[name].errors for name in names)
            or any(self[name].value() not in (None, "") for name in names)
        )


def domain_choice_field(
    *,
    label: str,
    domains: list[str],
    default_domain: str,
    first: tuple[str, str] | None = None,
    **kwargs,
) -> forms.ChoiceField:
    """A choice of short domain (the forms show one only when there are extra domains): the
    default one named by its host, then the extra ones; `first`, a choice before them (then the
    default domain is chosen by its host, else by "")."""
    default_label = f"{default_domain} (default)" if default_domain else "Default domain"
    choices = [first, (default_domain, default_label)] if first else [("", default_label)]
    return forms.ChoiceField(
        label=label,
        required=False,
        choices=[*choices, *((host, host) for host in domains)],
        **kwargs,
    )


class LinkCreateForm(
    LinkOptionsMixin,
    GateFieldsMixin,
    LinkFieldsMixin,
    TargetingFieldsMixin,
    PreviewFieldsMixin,
    AppLinkFieldsMixin,
):
    alias = forms.CharField(
        label="Custom alias",
        required=False,
        max_length=32,
        help_text="Optional. 3–32 letters, digits, “-” or “_”, e.g. spring-sale.",
        error_messages={"max_length": "Aliases can be at most %(limit_value)d characters."},
    )

    field_order = [
        "long_url",
        "alias",
        "title",
        "valid_since",
        "expires_at",
        "redirect_type",
        "pass_query",
        "track_conversions",
        "password",
        "max_visits",
    ]

    def __init__(self, *args, domains: list[str] | None = None, default_domain: str = "", **kwargs):
        """`domains`: the extra short domains' hosts; with any, the form offers a choice
        (`default_domain` names the default one)."""
        super().__init__(*args, **kwargs)
        self.setup_targeting()
        if domains:
            self.fields["domain"] = domain_choice_field(
                label="Short domain",
                domains=domains,
                default_domain=default_domain,
                help_text="Where the short link lives; an alias is taken per domain.",
            )


class LinkEditForm(
    LinkOptionsMixin,
    GateFieldsMixin,
    LinkFieldsMixin,
    TargetingFieldsMixin,
    PreviewFieldsMixin,
    AppLinkFieldsMixin,
):
    """Edits a link. Only the fields that changed go to the service (an expiry already in the
    past must not block a title change)."""

    archived = forms.BooleanField(
        label="Archived",
        required=False,
        help_text="Hidden from My links unless you ask to see archived links; it still redirects.",
    )

    def __init__(self, *args, link: UrlLink, **kwargs):
        kwargs.setdefault(
            "initial",
            {
                "long_url": link.long_url,
                "title": link.title,
                "valid_since": link.valid_since,
                "expires_at": link.expires_at,
                "redirect_type": link.redirect_type,
                "pass_query": link.pass_query,
                "track_conversions": link.track_conversions,
                "tags": ", ".join(tag.name for tag in link.tags.order_by("key")),
                "archived": link.archived,
                "max_visits": link.max_visits,
                "og_title": link.og_title,
                "og_description": link.og_description,
                "og_image": link.og_image,
                "expired_url": link.expired_url,
                "fallback_url": link.fallback_url,
                "ios_url": link.ios_url,
                "android_url": link.android_url,
                # The builder shows the UTM values the long URL holds now.
                **utm_in_url(link.long_url),
            },
        )
        super().__init__(*args, **kwargs)
        self.password_protected = bool(link.password_hash)
        if self.password_protected:
            self.fields["password"].label = "New password"
            self.fields[
                "password"
            ].help_text = "Leave empty to keep the current password (4–128 characters)."
            self.fields["remove_password"] = forms.BooleanField(
                label="Remove the password", required=False
            )
        if link.redirect_type not in dict(UI_REDIRECT_CHOICES):
            # Set to 307/308 through the API: keep it selectable rather than silently change it.
            self.fields["redirect_type"].choices = [
                *UI_REDIRECT_CHOICES,
                (link.redirect_type, RedirectType(link.redirect_type).label),
            ]
        self.setup_targeting(rules=link.rules, variants=link.variants)

    def has_changed_tags(self) -> bool:
        initial = split_tags(self.initial.get("tags", ""))
        return [tag_key(t) for t in initial] != [tag_key(t) for t in self.cleaned_data["tags"]]

    def changes(self) -> dict:
        changes = {
            name: self.cleaned_data[name]
            for name in self.changed_data
            if name not in UTM_FIELDS
            and name not in ("tags", "password", "remove_password")
            and not name.startswith(("rule_", "variant_"))
        }
        if "tags" in self.changed_data and self.has_changed_tags():
            changes["tags"] = self.cleaned_data["tags"]
        # Only the UTM values typed in: the others are the long URL's own (shown as initial).
        utm = {
            name: value for name, value in self.utm().items() if value and name in self.changed_data
        }
        if utm:
            changes["utm"] = utm
        # An empty password field keeps the password: it is never shown, so never filled in.
        if self.cleaned_data.get("remove_password"):
            changes["password"] = None
        elif self.cleaned_data.get("password"):
            changes["password"] = self.cleaned_data["password"]
        if self.targeting_changed():
            changes.update(self.targeting())  # both lists, as a whole: rows may have moved
        return changes


class LinkFilterForm(forms.Form):
    """The search / filter / sort bar above "My links"; bad values fall back to the defaults."""

    STATUS_CHOICES = [
        ("", "All links"),
        ("active", "Active"),
        ("scheduled", "Scheduled: not started yet"),
        ("expired", "Stopped: expired, revoked or out of visits"),
    ]
    # Each choice → the link states it shows (links.models.LinkStatus).
    STATUSES = {
        "active": frozenset({LinkStatus.ACTIVE}),
        "scheduled": frozenset({LinkStatus.SCHEDULED}),
        "expired": STOPPED,
    }
    ORDER_CHOICES = [(key, label) for key, (label, _) in LINK_ORDERS.items()]

    q = forms.CharField(
        label="Search",
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "URL, title or code"}),
    )
    status = forms.ChoiceField(
        label="Show",
        choices=STATUS_CHOICES,
        required=False,
        error_messages={"invalid_choice": "Unknown filter; showing all links."},
    )
    order = forms.ChoiceField(
        label="Sort by",
        choices=ORDER_CHOICES,
        required=False,
        error_messages={"invalid_choice": "Unknown sort order; showing newest first."},
    )
    # Destination health (links.services.health): "Broken" finds the links to fix first.
    health = forms.ChoiceField(
        label="Destination",
        choices=[
            ("", "Any destination"),
            ("broken", "Broken destination"),
            ("ok", "Working destination"),
            ("unknown", "Not checked yet"),
        ],
        required=False,
        error_messages={"invalid_choice": "Unknown filter; showing every destination."},
    )
    archived = forms.BooleanField(label="Show archived", required=False)

    def __init__(self, *args, domains: list[str] | None = None, default_domain: str = "", **kwargs):
        """`domains`: the extra short domains' hosts; with any, the bar filters by domain."""
        super().__init__(*args, **kwargs)
        if domains:
            self.fields["domain"] = domain_choice_field(
                label="Domain",
                domains=domains,
                default_domain=default_domain,
                first=("", "All domains"),
                error_messages={"invalid_choice": "Unknown domain; showing every domain."},
            )

    def selected_tags(self) -> list[str]:
        """The tags to filter by: `?tag=` is repeatable (a link must have them all)."""
        values = self.data.getlist("tag") if hasattr(self.data, "getlist") else []
        return list(dict.fromkeys(value.strip() for value in values if value.strip()))[:20]

    def selector_kwargs(self) -> dict:
        self.is_valid()
        data = self.cleaned_data  # the valid fields, even when another one is not
        return {
            "search": data.get("q") or None,
            "statuses": self.STATUSES.get(data.get("status") or ""),
            "order": data.get("order") or DEFAULT_ORDER,
            "tags": self.selected_tags(),
            "archived": bool(data.get("archived")),
            "domain": data.get("domain") or None,
            "health": data.get("health") or None,
        }


class UnlockForm(forms.Form):
    """The password a visitor types on a password-protected link's unlock page."""

    password = forms.CharField(
        label="Password",
        strip=False,  # spaces are part of a password
        max_length=128,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "autofocus": True}),
        error_messages={"required": "Enter the link's password."},
    )

    @classmethod
    def refused(cls, message: str) -> UnlockForm:
        """An empty form saying `message` beside the password (the one typed is not shown)."""
        form = cls({"password": ""})
        form.full_clean()
        form.errors["password"] = form.error_class([message])
        return form


class LinkImportForm(forms.Form):
    """The import page's upload: a file from another shortener and how to bring it in (the
    rules are links.imports.rows')."""

    file = forms.FileField(
        label="File",
        help_text="Bitly's CSV export, a YOURLS SQL dump or CSV, Kutt's or Shlink's API JSON, "
        "Shlink's CSV, or a CSV with the columns long_url, alias, title, tags.",
        widget=forms.FileInput(attrs={"accept": ".csv,.json,.sql,.txt,text/csv"}),
    )
    file_format = forms.ChoiceField(
        label="Format",
        required=False,
        choices=[("", "Tell from the file"), *((key, spec.label) for key, spec in FORMATS.items())],
    )
    on_taken_code = forms.ChoiceField(
        label="When an old code cannot be kept here (taken, reserved, too short…)",
        choices=[
            ("new", "Import the link with a new code"),
            ("skip", "Leave the link out"),
        ],
        initial="new",
        widget=forms.RadioSelect,
    )
    dry_run = forms.BooleanField(
        label="Only check the file: import nothing, show what would happen", required=False
    )

    def __init__(self, *args, domains: list[str] | None = None, default_domain: str = "", **kwargs):
        """`domains`: the extra short domains' hosts; with any, the form offers to put every
        link on one of them (`default_domain` names the default one)."""
        super().__init__(*args, **kwargs)
        if domains:
            self.fields["domain"] = domain_choice_field(
                label="Short domain",
                domains=domains,
                default_domain=default_domain,
                first=("", "Each link's old domain if it is one of ours, else the default"),
            )


class QrDesignForm(forms.Form):
    """The QR page's designer (links.services.qr_design checks what makes a code scannable)."""

    foreground = forms.CharField(
        label="Code colour",
        max_length=7,
        initial="#000000",
        widget=forms.TextInput(attrs={"type": "color"}),
    )
    background = forms.CharField(
        label="Background colour",
        max_length=7,
        initial="#ffffff",
        widget=forms.TextInput(attrs={"type": "color"}),
    )
    error_level = forms.ChoiceField(
        label="Error correction",
        choices=QrErrorLevel.choices,
        initial=QrErrorLevel.M,
        help_text="Higher levels survive more damage but make a denser code. A logo needs H.",
    )
    logo = forms.FileField(
        label="Centre logo",
        required=False,
        help_text="PNG or SVG, at most 200 KB. Leave empty to keep the current one.",
        widget=forms.FileInput(attrs={"accept": ".png,.svg,image/png,image/svg+xml"}),
    )
    remove_logo = forms.BooleanField(label="Remove the logo", required=False)


class BulkLinkActionForm(forms.Form):
    """My links' bulk action bar: one change for the links ticked (links.services.bulk_change
    applies it, link by link, by the rules of one link's edit, archive and revoke)."""

    ACTIONS = [
        ("add_tags", "Add tags"),
        ("set_tags", "Set tags (replace)"),
        ("archive", "Archive"),
        ("unarchive", "Unarchive"),
        ("set_expiry", "Set expiry"),
        ("move", "Move to workspace"),
        ("revoke", "Revoke"),
    ]
    action = forms.ChoiceField(label="With the selected links", choices=ACTIONS)
    tags = forms.CharField(
        label="Tags",
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={"placeholder": "spring, newsletter", "autocomplete": "off"}),
    )
    expires_at = ExpiryField(label="Expiry", required=False)
    workspace = forms.ChoiceField(label="To workspace", required=False, choices=[])

    def __init__(self, *args, workspaces: list | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        # Where the links may go: the other workspaces the user writes in.
        self.fields["workspace"].choices = [("", "—")] + [
            (workspace.slug, workspace.name) for workspace in workspaces or []
        ]
        self.fields["expires_at"].help_text = "Empty: never expires."

    def clean(self):
        data = super().clean()
        action = data.get("action")
        if action in ("add_tags", "set_tags"):
            data["tag_list"] = split_tags(data.get("tags", ""))
            if action == "add_tags" and not data["tag_list"]:
                self.add_error("tags", "Name at least one tag to add.")
        if action == "move" and not data.get("workspace"):
            self.add_error("workspace", "Choose the workspace to move the links to.")
        return data

    def changes(self) -> dict:
        """The change for links.services.bulk_change.link_change_many."""
        data = self.cleaned_data
        return {
            "add_tags": lambda: {"add_tags": data["tag_list"]},
            "set_tags": lambda: {"tags": data["tag_list"]},
            "archive": lambda: {"archived": True},
            "unarchive": lambda: {"archived": False},
            "set_expiry": lambda: {"expires_at": data.get("expires_at")},
            "move": lambda: {"workspace": data["workspace"]},
            "revoke": lambda: {"revoked": True},
        }[data["action"]]()
