"""Shapes of the links API: input checked for type here, rules enforced by links.services."""

from __future__ import annotations

import re

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.settings import api_settings

from core.api.fields import (
    BOOLEAN_MESSAGE,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
)
from links import qr
from links.cache import idn_ascii_url
from links.models import LinkStatus, RedirectType, UrlLink
from links.selectors import default_domain_host
from links.services.bulk import BULK_MAX_ITEMS
from links.services.gates import PASSWORD_MAX_LENGTH, visits_left, visits_used
from links.services.targeting import DEVICES, OS_NAMES
from links.services.utm import UTM_FIELDS
from links.shortlinks import link_short_url, short_url_for
from workspaces.models import Workspace

# Codes whose short URL is the base followed by the code, unchanged (every generated code and
# alias; anything else goes through short_url_for on its own).
_PLAIN_CODE = re.compile(r"[A-Za-z0-9_-]+\Z")

REDIRECT_TYPE_MESSAGE = "Choose one of 301, 302, 307 or 308."


class LinkSerializer(serializers.ModelSerializer):
    """A link as the API shows it. `clicks` comes from the view's one totals query."""

    short_url = serializers.SerializerMethodField(help_text="The URL to share.")
    domain = serializers.SerializerMethodField(
        help_text="The short domain the link is on (its host): the default one unless another "
        "was chosen at creation (GET /api/v1/domains/ lists them). Never changes."
    )
    workspace = serializers.SerializerMethodField(
        help_text="The slug of the workspace the link belongs to (GET /api/v1/workspaces/)."
    )
    is_active = serializers.BooleanField(
        read_only=True,
        help_text="False once the link is revoked, past its expiry or out of visits "
        "(max_visits reached): whenever `status` is not active.",
    )
    status = serializers.ChoiceField(
        choices=LinkStatus.choices,
        read_only=True,
        help_text="active, expired (past expires_at), revoked (at revoked_at) or limit_reached "
        "(max_visits people have been through: visitors get 410, as for an expired link).",
    )
    revoked_at = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the link was revoked; null if it never was.",
    )
    clicks = serializers.SerializerMethodField(help_text="Clicks by people (bots not counted).")
    tags = serializers.SerializerMethodField(help_text="The link's tags, A–Z.")
    archived = serializers.BooleanField(
        read_only=True, help_text="Hidden from the default list; still redirects."
    )
    password_protected = serializers.SerializerMethodField(
        help_text="True when visitors must give the link's password (it is never shown)."
    )
    long_url_ascii = serializers.SerializerMethodField(
        help_text="The long URL with its host in ASCII (IDNA) form, as the redirect sends it, "
        "when the host is an internationalised name: a look-alike such as `аpple.com` (a "
        "Cyrillic а) shows as `xn--pple-43d.com`. Null for a plain ASCII host.",
    )
    visits_left = serializers.SerializerMethodField(
        help_text="How many more people the link lets through before it answers 410; "
        "null without max_visits."
    )

    class Meta:
        model = UrlLink
        fields = [
            "code",
            "short_url",
            "domain",
            "workspace",
            "long_url",
            "long_url_ascii",
            "title",
            "redirect_type",
            "created_at",
            "expires_at",
            "pass_query",
            "rules",
            "variants",
            "is_active",
            "status",
            "revoked_at",
            "clicks",
            "tags",
            "archived",
            "password_protected",
            "max_visits",
            "visits_left",
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "string", "format": "uri", "nullable": True})
    def get_long_url_ascii(self, link: UrlLink) -> str | None:
        return idn_ascii_url(link.long_url)

    @extend_schema_field(OpenApiTypes.URI)
    def get_short_url(self, link: UrlLink) -> str:
        code = link.code
        if link.domain_host:
            return link_short_url(link, request=self.context.get("request"))
        if not _PLAIN_CODE.match(code):
            return short_url_for(code, request=self.context.get("request"))
        # The base is the same for every link of a response: worked out once.
        prefix = self.__dict__.get("_short_url_prefix")
        if prefix is None:
            prefix = short_url_for("", request=self.context.get("request"))
            self._short_url_prefix = prefix
        return prefix + code

    @extend_schema_field(OpenApiTypes.STR)
    def get_domain(self, link: UrlLink) -> str:
        if link.domain_host:
            return link.domain_host
        default = self.__dict__.get("_default_domain")
        if default is None:
            request = self.context.get("request")
            default = default_domain_host(request.get_host() if request is not None else "")
            self._default_domain = default
        return default

    def to_representation(self, link: UrlLink) -> dict:
        """What ModelSerializer would give, without its per-field machinery (a bulk answer
        shows a thousand links). test_bulk_serialization holds the two in step."""
        fields = self.fields
        expires_at, revoked_at = link.expires_at, link.revoked_at
        used = self._visits_used(link)
        status = link.status_at(visits_used=used)
        return {
            "code": link.code,
            "short_url": self.get_short_url(link),
            "domain": self.get_domain(link),
            "workspace": self.get_workspace(link),
            "long_url": link.long_url,
            "long_url_ascii": idn_ascii_url(link.long_url),
            "title": link.title,
            "redirect_type": fields["redirect_type"].to_representation(link.redirect_type),
            "created_at": self._created_at(link.created_at),
            "expires_at": (
                None if expires_at is None else fields["expires_at"].to_representation(expires_at)
            ),
            "pass_query": link.pass_query,
            "rules": link.rules,
            "variants": link.variants,
            "is_active": status == LinkStatus.ACTIVE,
            "status": status,
            "revoked_at": (
                None if revoked_at is None else fields["revoked_at"].to_representation(revoked_at)
            ),
            "clicks": self.get_clicks(link),
            "tags": self.get_tags(link),
            "archived": link.archived,
            "password_protected": bool(link.password_hash),
            "max_visits": link.max_visits,
            "visits_left": None if used is None else max(0, link.max_visits - used),
        }

    def _created_at(self, value):
        """The links of a bulk call share one creation time: it is formatted once."""
        if value is None:
            return None
        last = self.__dict__.get("_last_created_at")
        if last is not None and last[0] == value:
            return last[1]
        shown = self.fields["created_at"].to_representation(value)
        self._last_created_at = (value, shown)
        return shown

    @extend_schema_field(OpenApiTypes.STR)
    def get_workspace(self, link: UrlLink) -> str | None:
        # The links of a response share few workspaces: each slug is read once at most.
        slugs = self.__dict__.setdefault("_workspace_slugs", {})
        workspace_id = link.workspace_id
        if workspace_id not in slugs:
            if UrlLink.workspace.is_cached(link):
                slugs[workspace_id] = link.workspace.slug
            else:
                slugs[workspace_id] = (
                    Workspace.objects.filter(pk=workspace_id).values_list("slug", flat=True).first()
                )
        return slugs[workspace_id]

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_password_protected(self, link: UrlLink) -> bool:
        return bool(link.password_hash)

    @extend_schema_field({"type": "integer", "nullable": True})
    def get_visits_left(self, link: UrlLink) -> int | None:
        return visits_left(link, used=self._visits_used(link))

    def _visits_used(self, link: UrlLink) -> int | None:
        """A capped link's live visit count (None uncapped): what its status and visits_left
        both go by. A list view reads those of every capped link it shows at once
        ("visits_used"); a single link's is read here."""
        if link.max_visits is None:
            return None
        batched = self.context.get("visits_used") or {}
        return batched[link.pk] if link.pk in batched else visits_used(link)

    @extend_schema_field(OpenApiTypes.INT)
    def get_clicks(self, link: UrlLink) -> int:
        totals = self.context.get("totals") or {}
        return int(totals.get(link.pk, {}).get("clicks", 0))

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_tags(self, link: UrlLink) -> list[str]:
        # The view reads the tags of every link it shows in one query (context "tags").
        names = self.context.get("tags")
        if names is not None and link.pk in names:
            return names[link.pk]
        if link.pk is None:
            return []
        return [tag.name for tag in link.tags.order_by("key")]


def _warnings_field() -> serializers.DictField:
    return serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,  # not read_only: the schema would then list it as always present
        help_text=(
            'Present only when the link was made but something deserves a word, as {"field": '
            '["message"]}: an alias that differs from an existing one only by case.'
        ),
    )


class LinkCreatedSerializer(LinkSerializer):
    """The answer to POST /links/: the link, and `warnings` when there is something to say."""

    warnings = _warnings_field()

    class Meta(LinkSerializer.Meta):
        fields = [*LinkSerializer.Meta.fields, "warnings"]
        read_only_fields = LinkSerializer.Meta.fields


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


def _pass_query_field(**kwargs) -> StrictBooleanField:
    return StrictBooleanField(
        help_text=(
            "Add the query string a visitor brings (`/<code>?utm_source=x`) to the long URL, "
            "whose own keys win; true by default."
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


class RuleSerializer(serializers.Serializer):
    """One targeting rule, as documented (links.services.targeting checks what is sent)."""

    device = serializers.ChoiceField(choices=list(DEVICES), required=False)
    os = serializers.ChoiceField(choices=list(OS_NAMES), required=False)
    country = serializers.CharField(required=False, help_text="ISO 3166 alpha-2, e.g. CN.")
    language = serializers.CharField(
        required=False, help_text="Primary language tag, e.g. zh (Accept-Language's first)."
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
                "language) matches the visitor sends them to its url; else the variants, else "
                "long_url. At most 20."
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
    expires_at = _expires_at_field(required=False)
    redirect_type = _redirect_type_field(required=False)
    pass_query = _pass_query_field(required=False)
    password = _password_field(required=False)
    max_visits = _max_visits_field(required=False)
    rules = RulesField(required=False)
    variants = VariantsField(required=False)
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
    expires_at = _expires_at_field(required=False)
    redirect_type = _redirect_type_field(required=False)
    pass_query = _pass_query_field(required=False)
    password = _password_field(required=False)
    max_visits = _max_visits_field(required=False)
    rules = RulesField(required=False)
    variants = VariantsField(required=False)


class LinkListQuerySerializer(serializers.Serializer):
    """Query string of GET /api/v1/links/ (pagination's own parameters are checked here too)."""

    search = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        help_text="Part of the long URL or title, or the exact code.",
    )
    active = serializers.BooleanField(
        required=False,
        default=None,
        help_text="true: only working links; false: only stopped ones (revoked, expired or "
        "out of visits: limit_reached).",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    mine = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Staff only: true lists just your own links instead of everyone's.",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    tag = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only links with this tag (any case); repeat it for links with every one.",
    )
    archived = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: archived links are listed too (they are left out by default).",
        error_messages={"invalid": BOOLEAN_MESSAGE},
    )
    domain = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="Only the links on this short domain (its host; GET /api/v1/domains/).",
    )
    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Only the links of this workspace (its slug; GET /api/v1/workspaces/). "
        "Without it: the links of every workspace you belong to (an API key: its own "
        "workspace's). A workspace you do not belong to is a 404.",
    )
    page = serializers.IntegerField(
        required=False, min_value=1, error_messages={"invalid": "Use a page number (1, 2, …)."}
    )
    page_size = serializers.IntegerField(
        required=False,
        min_value=1,
        error_messages={"invalid": "Use a number of links per page (at most 500)."},
    )


class QrQuerySerializer(serializers.Serializer):
    """Query string of GET /api/v1/links/{code}/qr/."""

    format = serializers.ChoiceField(
        choices=qr.FORMATS,
        required=False,
        default="png",
        help_text="`png` (default) or `svg` (a vector drawing: any size, no `size` needed).",
        error_messages={"invalid_choice": "Choose png or svg."},
    )
    size = serializers.ChoiceField(
        choices=list(qr.SIZES),
        required=False,
        help_text="PNG width and height in pixels: "
        + "; ".join(size.label for size in qr.SIZES.values())
        + ". Without it, 10 pixels a module (about 370 px).",
        error_messages={
            "invalid_choice": f"Choose a size of {qr.SIZE_CHOICES_TEXT} (pixels wide)."
        },
    )


class _BulkItemField(serializers.Field):
    """An item as the JSON parser gave it (checked by the view, one by one); null is refused,
    as a JSONField refuses it, without JSONField re-encoding every item to check it is JSON."""

    def to_internal_value(self, data):
        return data


def bulk_workspace_field() -> StrictCharField:
    """A bulk call's one `workspace`, for every item."""
    return StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=50,
        help_text="For every item: " + CREATE_WORKSPACE_HELP,
    )


class BulkRequestSerializer(serializers.Serializer):
    """POST /api/v1/links/bulk/: the items are checked one by one by the view."""

    items = serializers.ListField(
        child=_BulkItemField(),
        allow_empty=False,
        max_length=BULK_MAX_ITEMS,
        help_text=f"1 to {BULK_MAX_ITEMS} links, each shaped like the body of POST /links/.",
        error_messages={
            "empty": "Send at least one URL.",
            "max_length": f"Send at most {BULK_MAX_ITEMS} URLs per call.",
        },
    )
    workspace = bulk_workspace_field()


class BulkRequestDocSerializer(serializers.Serializer):
    """The bulk request as documented: every item is a POST /links/ body.

    Input is read with BulkRequestSerializer, which leaves items unchecked so that one bad
    item is reported in its own result instead of refusing the whole call.
    """

    items = LinkCreateSerializer(many=True, allow_empty=False, max_length=BULK_MAX_ITEMS)
    workspace = bulk_workspace_field()


class BulkItemResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the item in the request.")
    status = serializers.IntegerField(
        help_text="201 created, 200 your existing link for the same URL, 400 refused."
    )
    link = LinkSerializer(allow_null=True, help_text="The link; null when refused.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        allow_null=True,
        help_text='Why the item was refused, as {"field": ["message"]}; null on success.',
    )
    warnings = _warnings_field()


class BulkResponseSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Items that made a new link.")
    existing = serializers.IntegerField(help_text="Items answered with an existing link.")
    failed = serializers.IntegerField(help_text="Items refused; see their errors.")
    results = BulkItemResultSerializer(many=True)


class WorkspaceQuerySerializer(serializers.Serializer):
    """`?workspace=` of the tags API."""

    workspace = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="The workspace whose tags (its slug). Without it: an API key's own "
        "workspace, else your personal one. A workspace you do not belong to is a 404.",
    )


class TagSerializer(serializers.Serializer):
    """A tag of GET /api/v1/tags/."""

    name = serializers.CharField(help_text="As first typed.")
    links = serializers.IntegerField(
        source="link_count", help_text="Your links carrying it (archived and stopped included)."
    )


class TagRenameSerializer(serializers.Serializer):
    """The body of PATCH /api/v1/tags/{tag}/ (the tag rules are the service's: clean_tags)."""

    name = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text="The new name (trimmed; at most 50 characters, no commas). The name of another "
        "tag of the workspace, any case, merges this one into it.",
    )


class TagRenamedSerializer(TagSerializer):
    """A renamed tag: a tag of GET /api/v1/tags/, and whether it was merged into another."""

    merged = serializers.BooleanField(
        help_text="True when the workspace already had a tag of that name: this tag's links now "
        "carry that one (which kept its spelling), and this tag is gone."
    )


class DomainSerializer(serializers.Serializer):
    """A short domain of GET /api/v1/domains/."""

    host = serializers.CharField(
        help_text="What `domain` takes on POST /links/ and the links show."
    )
    is_default = serializers.BooleanField(help_text="Links go here when no domain is given.")
