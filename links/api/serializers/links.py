"""A link as the links API shows it (one, a list, a bulk answer, the answer to a create)."""

from __future__ import annotations

import re

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from links.cache import idn_ascii_url
from links.models import LinkStatus, UrlLink
from links.selectors import default_domain_host
from links.services.app_links import NAMED_SCHEMES
from links.services.gates import visits_left, visits_used
from links.shortlinks import link_short_url, short_url_for
from workspaces.models import Workspace

# Codes whose short URL is the base followed by the code, unchanged (every generated code and
# alias; anything else goes through short_url_for on its own).
_PLAIN_CODE = re.compile(r"[A-Za-z0-9_-]+\Z")
_NAMED_SCHEMES = ", ".join(f"{name}:" for name in NAMED_SCHEMES)


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
        help_text="False before the link's start (valid_since) and once it is revoked, past "
        "its expiry or out of visits (max_visits reached): whenever `status` is not active.",
    )
    status = serializers.ChoiceField(
        choices=LinkStatus.choices,
        read_only=True,
        help_text="active, scheduled (before valid_since: visitors get a “not live yet” page, "
        "404), expired (past expires_at), revoked (at revoked_at) or limit_reached (max_visits "
        "people have been through: visitors get 410, as for an expired link). The first that "
        "holds, in the order revoked, expired, scheduled, limit_reached.",
    )
    valid_since = serializers.DateTimeField(
        read_only=True,
        allow_null=True,
        help_text="When the link starts working; null: from its creation.",
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
    expired_url = serializers.SerializerMethodField(
        help_text="The fallback: where visitors go (302) once the link is expired, revoked or "
        "at its limit; null: the short domain's fallback, else the 410 page."
    )
    ios_url = serializers.SerializerMethodField(
        help_text="App deep link for iOS and iPadOS visitors (an app's own scheme, a universal "
        f"link, {_NAMED_SCHEMES}), used when no rule matched them; null: none."
    )
    fallback_url = serializers.SerializerMethodField(
        help_text="Automatic failover: where visitors go while `health.status` is `broken`; "
        "null: none."
    )
    health = serializers.SerializerMethodField(
        help_text="The destination health checker's view (docs/link-health.md): `status` "
        "`ok`, `broken` or `unknown` (not checked yet), `since` when it took that status, "
        "`reason` in words (a failure, or a soft-404 hint on a working page), `checked_at` the "
        "last check."
    )
    android_url = serializers.SerializerMethodField(
        help_text="App deep link for Android visitors (an app's own scheme, an app link, "
        f"{_NAMED_SCHEMES}), used when no rule matched them; null: none."
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
            "valid_since",
            "expires_at",
            "pass_query",
            "track_conversions",
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
            "og_title",
            "og_description",
            "og_image",
            "expired_url",
            "ios_url",
            "android_url",
            "fallback_url",
            "health",
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
        expires_at, revoked_at, valid_since = link.expires_at, link.revoked_at, link.valid_since
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
            "valid_since": (
                None
                if valid_since is None
                else fields["valid_since"].to_representation(valid_since)
            ),
            "expires_at": (
                None if expires_at is None else fields["expires_at"].to_representation(expires_at)
            ),
            "pass_query": link.pass_query,
            "track_conversions": link.track_conversions,
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
            "og_title": link.og_title,
            "og_description": link.og_description,
            "og_image": link.og_image,
            "expired_url": link.expired_url or None,
            "ios_url": link.ios_url or None,
            "android_url": link.android_url or None,
            "fallback_url": link.fallback_url or None,
            "health": self.get_health(link),
        }

    @extend_schema_field({"type": "string", "format": "uri", "nullable": True})
    def get_expired_url(self, link: UrlLink) -> str | None:
        return link.expired_url or None

    # Not "uri": an app's own scheme (myapp://…) is not what a client checks a URI against.
    @extend_schema_field({"type": "string", "nullable": True})
    def get_ios_url(self, link: UrlLink) -> str | None:
        return link.ios_url or None

    @extend_schema_field({"type": "string", "nullable": True})
    def get_android_url(self, link: UrlLink) -> str | None:
        return link.android_url or None

    @extend_schema_field({"type": "string", "format": "uri", "nullable": True})
    def get_fallback_url(self, link: UrlLink) -> str | None:
        return link.fallback_url or None

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "broken", "unknown"]},
                "since": {"type": "string", "format": "date-time", "nullable": True},
                "reason": {"type": "string"},
                "checked_at": {"type": "string", "format": "date-time", "nullable": True},
            },
            "required": ["status", "since", "reason", "checked_at"],
        }
    )
    def get_health(self, link: UrlLink) -> dict:
        moment = self.fields["created_at"].to_representation
        since, checked = link.health_since, link.health_checked_at
        return {
            "status": link.health_status,
            "since": None if since is None else moment(since),
            "reason": link.health_reason,
            "checked_at": None if checked is None else moment(checked),
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
