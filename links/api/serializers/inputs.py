"""What the links API reads from a link's create and change bodies (and each bulk item):
types checked here, the rules enforced by links.services."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.settings import api_settings

from core.api.fields import (
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
)
from links.models import CLICK_ID_PARAM, RedirectType, UrlLink
from links.services.app_links import NAMED_SCHEMES, REFUSED_SCHEMES
from links.services.gates import PASSWORD_MAX_LENGTH
from links.services.targeting import DEVICES, OS_NAMES
from links.services.utm import UTM_FIELDS

REDIRECT_TYPE_MESSAGE = "Choose one of 301, 302, 307 or 308."


def _long_url_field(**kwargs) -> StrictCharField:
    # Whether it is a URL we accept is links.services.policy.validate_long_url's call.
    return StrictCharField(
        help_text="The http or https URL the short link leads to (at most 2048 characters).",
        error_messages={"blank": "Enter the long URL to shorten."},
        **kwargs,
    )


def _redirect_type_field(**kwargs) -> StrictChoiceField:
    return StrictChoiceField(
        choices=RedirectType.choices,
        help_text="HTTP status of the redirect; 302 (the default) lets every click be counted.",
        error_messages={"invalid_choice": REDIRECT_TYPE_MESSAGE},
        **kwargs,
    )


def _expires_at_field(**kwargs) -> serializers.DateTimeField:
    return serializers.DateTimeField(
        allow_null=True,
        help_text="When the link stops working (ISO 8601, in the future); null for never.",
        **kwargs,
    )


def _valid_since_field(**kwargs) -> serializers.DateTimeField:
    return serializers.DateTimeField(
        allow_null=True,
        help_text=(
            "When the link starts working (ISO 8601; before `expires_at`). Until then its status "
            "is `scheduled` and visitors get a “not live yet” page (404), counted nowhere; from "
            "then on it redirects, with no edit. Null (or left out): at once."
        ),
        **kwargs,
    )


def _pass_query_field(**kwargs) -> StrictBooleanField:
    return StrictBooleanField(
        help_text=(
            "Add the query string a visitor brings (`/<code>?utm_source=x`) to the long URL, "
            "whose own keys win; true by default."
        ),
        **kwargs,
    )


def _track_conversions_field(**kwargs) -> StrictBooleanField:
    return StrictBooleanField(
        help_text=(
            f"Append the click's id (`{CLICK_ID_PARAM}=<32 hex>`) to a web destination, so the "
            "leads and sales your site reports with it (POST /api/v1/track/lead, /track/sale) "
            "count for this link; false by default."
        ),
        **kwargs,
    )


def _expired_url_field(**kwargs) -> StrictCharField:
    # Whether it is a URL we accept is links.services.policy.validate_optional_url's call.
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text=(
            "The fallback: where visitors go (302) once the link is expired, revoked or at its "
            "visit limit, instead of the 410 page; counted as the link's visits, noted as sent "
            "to the fallback. Not before its start (`valid_since`: the 404 page). The long URL's "
            'rules apply. Null or "" (the default): the short domain\'s own fallback if it has '
            "one, else the 410 page."
        ),
        **kwargs,
    )


def _fallback_url_field(**kwargs) -> StrictCharField:
    # Whether it is a URL we accept is links.services.policy.validate_optional_url's call.
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text=(
            "Automatic failover: where visitors go while the health checker finds the link's "
            "destination broken (`health.status` is `broken`), and only then; back to the "
            "destination as soon as it recovers. Such visits are the link's, with this URL as "
            'their destination. The long URL\'s rules apply. Null or "" (the default): none, '
            "visitors still go to the broken destination."
        ),
        **kwargs,
    )


def _app_url_field(os_name: str, **kwargs) -> StrictCharField:
    # What passes is links.services.app_links.validate_app_url's call; the help names its
    # schemes from the same constants.
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text=(
            f"App deep link: where {os_name} visitors go when no targeting rule matched them, "
            "before the variants and long_url. An app's own scheme (`myapp://item/7`), a "
            "universal / app link (https, checked like long_url), or "
            f"{', '.join(f'`{name}:`' for name in NAMED_SCHEMES)}. Refused: "
            f"{', '.join(f'`{name}:`' for name in sorted(REFUSED_SCHEMES))}. "
            'Null or "": none.'
        ),
        **kwargs,
    )


def _title_field(**kwargs) -> StrictCharField:
    return StrictCharField(
        allow_blank=True,
        max_length=UrlLink._meta.get_field("title").max_length,
        help_text="A name for the link, shown in lists.",
        **kwargs,
    )


def _og_title_field(**kwargs) -> StrictCharField:
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text=(
            "Social preview: the title link-preview fetchers (Facebook, X, LinkedIn, Slack, …) "
            "show (og:title, twitter:title); at most 200 characters. Any of og_title, "
            "og_description, og_image set: fetchers get a preview page, people the redirect."
        ),
        **kwargs,
    )


def _og_description_field(**kwargs) -> StrictCharField:
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text="Social preview: og:description and twitter:description; at most 500 characters.",
        **kwargs,
    )


def _og_image_field(**kwargs) -> StrictCharField:
    return StrictCharField(
        allow_blank=True,
        allow_null=True,
        help_text=(
            "Social preview: og:image and twitter:image, an https URL (checked like a long URL)."
        ),
        **kwargs,
    )


class RuleSerializer(serializers.Serializer):
    """One targeting rule, as documented (links.services.targeting checks what is sent)."""

    device = serializers.ChoiceField(choices=list(DEVICES), required=False)
    os = serializers.ChoiceField(choices=list(OS_NAMES), required=False)
    country = serializers.CharField(required=False, help_text="ISO 3166 alpha-2, e.g. CN.")
    city = serializers.CharField(
        required=False,
        help_text="The visitor's city as the stats name it (GeoIP), any case, e.g. London.",
    )
    language = serializers.CharField(
        required=False, help_text="Primary language tag, e.g. zh (Accept-Language's first)."
    )
    query = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True),
        required=False,
        help_text=(
            'Query parameters the visitor must come with: {"utm_source": "mail"} that value, '
            '{"debug": ""} without a value, {"ref": null} any value. Text is taken too: '
            "utm_source=mail&debug&ref=*."
        ),
    )
    ip = serializers.CharField(
        required=False,
        help_text=(
            "The visitor's address (as stored with the visit): one address, a network "
            "(203.0.113.0/24, IPv6 too) or an IPv4 wildcard ending in stars (203.0.113.*)."
        ),
    )
    after = serializers.DateTimeField(
        required=False, help_text="Matches from this moment on (ISO 8601; stored in UTC)."
    )
    before = serializers.DateTimeField(
        required=False, help_text="Matches until this moment (ISO 8601; stored in UTC)."
    )
    url = serializers.CharField(help_text="Where visitors who match every condition go.")


class VariantSerializer(serializers.Serializer):
    url = serializers.CharField()
    weight = serializers.IntegerField(min_value=1, max_value=100)


class _AnyItem(serializers.Field):
    """An item as the JSON parser gave it: links.services.targeting checks it, so that every
    refusal is one flat message naming the item and field (`rules[0]: …`), not DRF's nested
    per-index errors."""

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


@extend_schema_field(
    {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 20}
)
class TagsField(serializers.Field):
    """A JSON list, passed on as it is: links.services.tags.clean_tags checks its items and words
    every refusal as one message (a ListField would answer {"tags": {"0": [...]}}, not the
    API's {"field": ["message"]})."""

    default_error_messages = {"invalid": "Send the tags as a list of strings."}

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


def _tags_field(**kwargs) -> TagsField:
    return TagsField(
        help_text=(
            "Free tags (any case, trimmed; at most 20 of at most 50 characters, no commas). "
            "On PATCH the list replaces the link's tags."
        ),
        **kwargs,
    )


def _utm_field(name: str) -> StrictCharField:
    return StrictCharField(
        required=False,
        allow_blank=True,
        write_only=True,
        max_length=200,
        help_text=(
            f"Write-only: merged into long_url's query as `{name}=…` (the existing query kept, "
            "the same key replaced where it stands). Empty: not given."
        ),
    )


def _archived_field(**kwargs) -> StrictBooleanField:
    return StrictBooleanField(
        help_text="true hides the link from the default list (it still redirects); reversible.",
        **kwargs,
    )


def _password_field(**kwargs) -> StrictCharField:
    # The length rules are links.services.gates's; max_length here only stops abuse.
    return StrictCharField(
        write_only=True,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=PASSWORD_MAX_LENGTH * 4,
        help_text=(
            "Visitors must give this password (4 to 128 characters) on an unlock page, or API "
            "clients in an `X-Link-Password` header; null removes it. Never shown: the link "
            "shows `password_protected`."
        ),
        **kwargs,
    )


def _max_visits_field(**kwargs) -> StrictIntegerField:
    return StrictIntegerField(
        allow_null=True,
        help_text=(
            "After this many clicks by people the link answers 410; 1 or more, null for no "
            "cap. Only people are sent on: bots and HEAD requests use no visit and get 403 "
            "without the destination. The link shows `visits_left`."
        ),
        error_messages={"invalid": "Enter a whole number of visits, 1 or more."},
        **kwargs,
    )


class _LinkOptionsMixin(serializers.Serializer):
    """Tags, UTM values and the archived flag, as create and change both take them."""

    tags = _tags_field(required=False, allow_null=True)
    utm_source = _utm_field("utm_source")
    utm_medium = _utm_field("utm_medium")
    utm_campaign = _utm_field("utm_campaign")
    utm_term = _utm_field("utm_term")
    utm_content = _utm_field("utm_content")
    archived = _archived_field(required=False)

    def validate(self, attrs: dict) -> dict:
        # The services take the five UTM values as one `utm` mapping.
        utm = {name: attrs.pop(name) for name in UTM_FIELDS if name in attrs}
        if utm:
            attrs["utm"] = utm
        return attrs


@extend_schema_field(RuleSerializer(many=True))
class RulesField(serializers.ListField):
    """`rules` as sent: a list of objects, checked item by item by the service, whose errors
    name the item and field (`rules[1].country: …`). null clears them, as [] does."""

    def __init__(self, **kwargs):
        super().__init__(
            child=_AnyItem(),
            allow_null=True,
            help_text=(
                "Targeting: the first rule whose every given condition (device, os, country, "
                "city, language, query, ip, after, before) matches the visitor sends them to its "
                "url; else the variants, else long_url. At most 20."
            ),
            **kwargs,
        )


@extend_schema_field(VariantSerializer(many=True))
class VariantsField(serializers.ListField):
    def __init__(self, **kwargs):
        super().__init__(
            child=_AnyItem(),
            allow_null=True,
            help_text=(
                "A/B split: 2 to 4 {url, weight} with weights 1–100 adding up to 100; each "
                "visitor (client id) always gets the same one. [] or null: none."
            ),
            **kwargs,
        )


CREATE_WORKSPACE_HELP = (
    "The slug of the workspace to put the link in (one where you are an owner or editor; "
    "GET /api/v1/workspaces/ lists yours). Left out: an API key's own workspace, else your "
    "personal one."
)


class LinkCreateSerializer(_LinkOptionsMixin, serializers.Serializer):
    """POST /api/v1/links/ (and each item of a bulk call)."""

    workspace = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=50,
        help_text=CREATE_WORKSPACE_HELP,
    )

    long_url = _long_url_field()
    alias = StrictCharField(
        required=False,
        allow_blank=True,
        help_text=(
            "A custom code instead of a generated one: 3 to 32 letters, digits, '-' or '_'. "
            "Some words (admin, api, …) are reserved."
        ),
    )
    title = _title_field(required=False)
    valid_since = _valid_since_field(required=False)
    expires_at = _expires_at_field(required=False)
    redirect_type = _redirect_type_field(required=False)
    pass_query = _pass_query_field(required=False)
    track_conversions = _track_conversions_field(required=False)
    password = _password_field(required=False)
    max_visits = _max_visits_field(required=False)
    rules = RulesField(required=False)
    variants = VariantsField(required=False)
    expired_url = _expired_url_field(required=False)
    fallback_url = _fallback_url_field(required=False)
    ios_url = _app_url_field("iOS and iPadOS", required=False)
    android_url = _app_url_field("Android", required=False)
    domain = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=300,
        help_text=(
            "The short domain to put the link on, by host (GET /api/v1/domains/ lists them); "
            "the default one when left out. An alias is taken per domain."
        ),
    )
    og_title = _og_title_field(required=False)
    og_description = _og_description_field(required=False)
    og_image = _og_image_field(required=False)


_TEXT_ITEM_FIELDS = frozenset({"long_url", "alias", "title"})
_TITLE_MAX_LENGTH = UrlLink._meta.get_field("title").max_length
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_only_item(raw) -> dict | None:
    """LinkCreateSerializer's validated data for an item of text fields that it accepts as
    they are after trimming (the usual bulk item: just a long_url); None for anything else,
    which the serializer checks itself."""
    if type(raw) is not dict or "long_url" not in raw or not raw.keys() <= _TEXT_ITEM_FIELDS:
        return None
    data = {}
    for name, value in raw.items():
        # StrictCharField: a string, trimmed, no NUL or surrogate characters.
        if type(value) is not str or "\x00" in value or _SURROGATE.search(value):
            return None
        value = value.strip()
        if (name == "long_url" and not value) or (
            name == "title" and len(value) > _TITLE_MAX_LENGTH
        ):
            return None  # refused: the serializer words the error
        data[name] = value
    return data


def validate_create_items(raw_items: list) -> list[tuple[dict | None, dict | None]]:
    """Each bulk item checked as `LinkCreateSerializer(data=item).is_valid()` would check it:
    (validated data, None) or (None, errors), with the same errors.

    A serializer instance deep-copies its declared fields when first used, which for a
    thousand items cost more than everything else in the call: one instance checks them all,
    and items of plain text fields do not need it (test_bulk_items holds the two in step).
    """
    checker = LinkCreateSerializer()
    results: list[tuple[dict | None, dict | None]] = []
    for raw in raw_items:
        data = _text_only_item(raw)
        if data is not None:
            results.append((data, None))
            continue
        try:
            results.append((checker.run_validation(raw), None))
        except serializers.ValidationError as exc:
            errors = exc.detail
            if (
                isinstance(errors, list)
                and len(errors) == 1
                and getattr(errors[0], "code", None) == "null"
            ):
                # As Serializer.errors words a null item.
                errors = {
                    api_settings.NON_FIELD_ERRORS_KEY: [ErrorDetail("No data provided", "null")]
                }
            results.append((None, errors))
    return results


class LinkUpdateSerializer(_LinkOptionsMixin, serializers.Serializer):
    """PATCH /api/v1/links/{code}/: only the fields sent are changed."""

    long_url = _long_url_field(required=False)
    title = _title_field(required=False)
    valid_since = _valid_since_field(required=False)
    expires_at = _expires_at_field(required=False)
    redirect_type = _redirect_type_field(required=False)
    pass_query = _pass_query_field(required=False)
    track_conversions = _track_conversions_field(required=False)
    password = _password_field(required=False)
    max_visits = _max_visits_field(required=False)
    rules = RulesField(required=False)
    variants = VariantsField(required=False)
    og_title = _og_title_field(required=False)
    og_description = _og_description_field(required=False)
    og_image = _og_image_field(required=False)
    expired_url = _expired_url_field(required=False)
    fallback_url = _fallback_url_field(required=False)
    ios_url = _app_url_field("iOS and iPadOS", required=False)
    android_url = _app_url_field("Android", required=False)
