"""Shlink REST v3 endpoints: each reads Shlink's parameters, calls our services or selectors,
and answers in Shlink's shapes (compat.shlink.shapes). No rule lives here."""

from __future__ import annotations

from collections import defaultdict

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from analytics.selectors import (
    orphan_visit_slice,
    orphan_visit_total,
    orphan_visits_visible,
    visit_list,
)
from analytics.services import link_visits_delete, orphan_visits_delete
from compat.shlink import redirect_rules, shapes
from compat.shlink.auth import ShlinkApiKeyAuthentication
from compat.shlink.problems import (
    DomainNotFound,
    InvalidArgument,
    MercureNotConfigured,
    shlink_exception_handler,
)
from core.api.base import validated
from core.api.scopes import ApiScope
from core.api.throttles import AnonThrottle
from core.health import check_database
from links.api.base import LinkApiView
from links.codes.aliases import ALIAS_RE
from links.domains import host_form
from links.models import DEFAULT_DOMAIN_ID, UrlLink
from links.selectors import (
    DEFAULT_ORDER,
    TAGS_ALL,
    TAGS_ANY,
    LinkNotFound,
    default_domain_authority,
    default_domain_host,
    domain_id_for_name,
    domain_list_for,
    domains_managed_by,
    link_click_sum,
    link_click_totals,
    link_find_existing,
    link_get_changeable,
    link_get_visible,
    link_list,
    link_tag_names,
    tag_get,
    tag_list,
)
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.domains import domain_save
from links.services.tags import tag_delete_many, tag_rename
from links.shortlinks import link_short_url
from workspaces.selectors import workspace_id_or_personal

# What we answer as Shlink's version: the API level this layer follows, which dashboards read to
# choose features. Shlink's web UI (shlink-web-component 0.18) turns on at 4.2 the IP redirect
# condition, at 4.3 the geolocation ones and the short-URL list's domain filter, at 4.5 the
# any-value/valueless query conditions and desktop device types, at 4.6 the list's excluded
# tags (excludeTags[], excludeTagsMode) and the domain filter on tag, orphan and non-orphan
# visits, at 5.0 the before-date/after-date conditions: all served here (docs/api-shlink.md).
# Not 5.1: its `browser` condition has no condition of ours (redirect_rules.UNSUPPORTED).
SHLINK_API_VERSION = "5.0.0"
SHORT_URLS_PER_PAGE = 10  # Shlink's default
MAX_PER_PAGE = 1000
MAX_PAGE = 10**6
VISITS_PER_PAGE = 5000  # all of a link's visits in one page unless asked otherwise
# orderBy `field-DIR` (Shlink's OrderableField; a field without a direction is ascending, as
# Shlink reads it) → links.selectors.LINK_ORDERS. Shlink's `visits` counts bots too, its
# `nonBotVisits` only people: our people's clicks, with and without bots' added.
ORDERS = {
    ("dateCreated", "ASC"): "oldest",
    ("dateCreated", "DESC"): "newest",
    ("shortCode", "ASC"): "code",
    ("shortCode", "DESC"): "code_desc",
    ("longUrl", "ASC"): "long_url",
    ("longUrl", "DESC"): "long_url_desc",
    ("title", "ASC"): "title",
    ("title", "DESC"): "title_desc",
    ("visits", "ASC"): "all_clicks_asc",
    ("visits", "DESC"): "all_clicks",
    ("nonBotVisits", "ASC"): "clicks_asc",
    ("nonBotVisits", "DESC"): "clicks",
}
ORDER_FIELDS = list(dict.fromkeys(field for field, _ in ORDERS))
# Shlink's tagsMode; without one, a short URL with any of the tags named is listed.
TAGS_MODES = {"any": TAGS_ANY, "all": TAGS_ALL}
HEALTH_JSON = "application/health+json"
TRUE, FALSE = ("true", "1"), ("false", "0", "")


def _flag(params, name: str) -> bool:
    value = params.get(name, "").strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise InvalidArgument({name: ["Use true or false."]})


def _whole(params, name: str) -> int | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidArgument({name: ["Give a whole number."]}) from None


def _page_number(params) -> int:
    """`page`: 1 when absent or below 1."""
    page = _whole(params, "page")
    return 1 if page is None or page < 1 else min(page, MAX_PAGE)


def _per_page(params, *, default: int, cap: int) -> int:
    """`itemsPerPage`: `default` when absent, at most `cap`; below 1 (Shlink's -1, "all"):
    `cap`."""
    size = _whole(params, "itemsPerPage")
    if size is None:
        return default
    return cap if size < 1 else min(size, cap)


def _order(params) -> str:
    """`orderBy`: a LINK_ORDERS key; newest first when absent."""
    raw = params.get("orderBy", "").strip()
    if not raw:
        return DEFAULT_ORDER
    field, _, direction = raw.partition("-")
    order = ORDERS.get((field, direction.upper() or "ASC"))
    if order is None:
        fields = ", ".join(ORDER_FIELDS)
        raise InvalidArgument(
            {"orderBy": [f"Expected field-ASC or field-DESC, field one of {fields}."]}
        )
    return order


def _tags_mode(params, name: str = "tagsMode") -> str:
    mode = TAGS_MODES.get(params.get(name, "").strip() or "any")
    if mode is None:
        raise InvalidArgument({name: ["Expected any or all."]})
    return mode


def _tag_names(params, name: str) -> list[str] | None:
    """A list of tags: `name[]=a&name[]=b` (the SDK's spelling), else `name=a&name=b`."""
    return params.getlist(f"{name}[]") or params.getlist(name) or None


def _domain(params) -> str | None:
    """A `domain` parameter: a host, or Shlink's DEFAULT keyword for the default domain."""
    domain = params.get("domain", "").strip()
    return None if domain in ("", "DEFAULT") else domain


def _domain_filter(params, *, request_host: str) -> str | None:
    """The short-URL list's `domain` filter (Shlink 4.3): a host, or DEFAULT for the links on
    the default domain only (its host here, as link_list reads it); absent: every domain."""
    domain = params.get("domain", "").strip()
    if domain == "DEFAULT":
        return default_domain_host(request_host)
    return domain or None


def _orphan_host(params, *, request_host: str) -> str | None:
    """Orphan visits' `domain` filter (Shlink 4.6) as the host their counts keep: lowercase,
    no port (`DEFAULT`: the default domain's). Shlink matches the domain anywhere in the
    visited URL; here it is the host asked for, exactly."""
    domain = _domain_filter(params, request_host=request_host)
    return None if domain is None else host_form(domain)


class DateRangeSerializer(serializers.Serializer):
    """`startDate`, `endDate`: ISO 8601, as Shlink clients send them."""

    startDate = serializers.DateTimeField(required=False)
    endDate = serializers.DateTimeField(required=False)


class EditShortUrlSerializer(serializers.Serializer):
    longUrl = serializers.CharField(required=False, trim_whitespace=True)
    title = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=True
    )
    tags = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    validSince = serializers.DateTimeField(required=False, allow_null=True)
    validUntil = serializers.DateTimeField(required=False, allow_null=True)
    maxVisits = serializers.IntegerField(required=False, allow_null=True)
    forwardQuery = serializers.BooleanField(required=False)
    crawlable = serializers.BooleanField(required=False)  # accepted, ignored


class CreateShortUrlSerializer(EditShortUrlSerializer):
    longUrl = serializers.CharField(trim_whitespace=True)
    customSlug = serializers.CharField(required=False, allow_blank=True, trim_whitespace=True)
    domain = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    findIfExists = serializers.BooleanField(required=False, default=False)
    shortCodeLength = serializers.IntegerField(required=False, allow_null=True)  # ignored


# Shlink names → link_update's keywords
EDITS = {
    "longUrl": "long_url",
    "title": "title",
    "tags": "tags",
    "validSince": "valid_since",
    "validUntil": "expires_at",
    "maxVisits": "max_visits",
    "forwardQuery": "pass_query",
}


class ShlinkView(LinkApiView):
    """X-Api-Key in, Shlink's shapes and problem+json errors out, the API's throttles."""

    authentication_classes = [ShlinkApiKeyAuthentication]
    pagination_class = None
    # Not in /api/v1/schema/: that documents our own API; Shlink publishes this one's.
    schema = None

    def get_exception_handler(self):
        return shlink_exception_handler

    def get_link(self, short_code: str) -> UrlLink:
        """The caller's link (any for staff; an API key's: of its workspace only). A revoked one
        is gone, as Shlink's delete leaves it: not found."""
        if not ALIAS_RE.match(short_code):
            raise LinkNotFound(short_code)
        link = link_get_visible(
            code=short_code,
            user=self.request.user,
            domain=_domain(self.request.query_params),
            request_host=self.request.get_host(),
            workspace_id=self.pinned_workspace_id,
        )
        if link.revoked_at is not None:
            raise LinkNotFound(short_code)
        return link

    def update_link(self, link: UrlLink, **changes) -> UrlLink:
        """`changes` made to `link` as the caller, through links.services.change.link_update."""
        return link_update(
            code=link.code,
            domain=link.domain_host,
            user=self.request.user,
            request_host=self.request.get_host(),
            workspace_id=self.pinned_workspace_id,
            **changes,
        )


class ShortUrlsView(ShlinkView):
    def get(self, request):
        params = request.query_params
        dates = validated(DateRangeSerializer, params)  # created between, both ends included
        links = link_list(
            user=request.user,
            search=params.get("searchTerm") or None,
            exclude_expired=_flag(params, "excludePastValidUntil"),
            exclude_limit_reached=_flag(params, "excludeMaxVisitsReached"),
            order=_order(params),
            owned_only=False,  # staff see every link, as on the native API
            tags=_tag_names(params, "tags"),
            tags_mode=_tags_mode(params),
            exclude_tags=_tag_names(params, "excludeTags"),
            exclude_tags_mode=_tags_mode(params, "excludeTagsMode"),
            created_from=dates.get("startDate"),
            created_until=dates.get("endDate"),
            archived=True,  # archiving is ours: Shlink lists every short URL
            domain=_domain_filter(params, request_host=request.get_host()),
            request_host=request.get_host(),
            include_revoked=False,  # revoked = deleted for Shlink clients
            workspace_id=self.pinned_workspace_id,
        )
        rows, pagination = shapes.page(
            links,
            page_number=_page_number(params),
            per_page=_per_page(params, default=SHORT_URLS_PER_PAGE, cap=MAX_PER_PAGE),
        )
        data = shapes.short_urls(rows, request=request)
        return Response({"shortUrls": {"data": data, "pagination": pagination}})

    def post(self, request):
        data = validated(CreateShortUrlSerializer, request.data)
        options = {
            "alias": data.get("customSlug") or None,
            "title": data.get("title") or None,
            "valid_since": data.get("validSince"),
            "expires_at": data.get("validUntil"),
            "max_visits": data.get("maxVisits"),
            "tags": data.get("tags") or None,
            "pass_query": data.get("forwardQuery", True),
            "domain": data.get("domain") or None,
        }
        if data["findIfExists"]:
            existing = link_find_existing(
                user=request.user,
                long_url=data["longUrl"],
                domain=options["domain"],
                alias=options["alias"],
                tags=options["tags"],
                valid_since=options["valid_since"],
                request_host=request.get_host(),
                workspace_id=self.pinned_workspace_id,
            )
            if existing is not None:
                return Response(shapes.short_url(existing, request=request))
        result = link_create(
            user=request.user,
            long_url=data["longUrl"],
            request_host=request.get_host(),
            pinned_workspace_id=self.pinned_workspace_id,
            **options,
        )
        return Response(shapes.short_url(result.link, request=request))


class ShortUrlView(ShlinkView):
    def get(self, request, short_code: str):
        return Response(shapes.short_url(self.get_link(short_code), request=request))

    def patch(self, request, short_code: str):
        link = self.get_link(short_code)  # 404 before 400: others' codes cannot be probed
        data = validated(EditShortUrlSerializer, request.data)
        changes = {EDITS[name]: value for name, value in data.items() if name in EDITS}
        if "title" in changes:
            changes["title"] = changes["title"] or ""
        if "tags" in changes:
            changes["tags"] = [tag for tag in changes["tags"] if tag.strip()]
        link = self.update_link(link, **changes)
        return Response(shapes.short_url(link, request=request))

    def delete(self, request, short_code: str):
        link = self.get_link(short_code)
        link_revoke(
            code=link.code,
            domain=link.domain_host,
            user=request.user,
            workspace_id=self.pinned_workspace_id,
        )
        return Response(status=204)


class RedirectRulesView(ShlinkView):
    """A short URL's redirect rules, as Shlink lists and sets them (compat.shlink.redirect_rules
    translates; links.services.targeting checks, through link_update)."""

    def get(self, request, short_code: str):
        return Response(redirect_rules.answer(self.get_link(short_code)))

    def post(self, request, short_code: str):
        """Replace the rules with those sent, in their order (Shlink's priorities): [] removes
        them. A viewer of the link's workspace: 403, as for any change."""
        link = self.get_link(short_code)  # 404 before 400: others' codes cannot be probed
        rules, places = redirect_rules.from_shlink(request.data)
        # A GET's trailing app-link rules posted back are the app links, not rules.
        rules = redirect_rules.without_app_links(rules, link)
        try:
            link = self.update_link(link, rules=rules)
        except DjangoValidationError as error:
            if "rules" not in getattr(error, "error_dict", {}):
                raise
            raise InvalidArgument(redirect_rules.shlink_problems(error, places)) from None
        return Response(redirect_rules.answer(link))


class VisitsListView(ShlinkView):
    """Shlink's page of visits, one shape for a short URL's, a tag's, a domain's and every
    visible short URL's (`startDate`, `endDate`, `excludeBots`, `page`, `itemsPerPage`)."""

    read_scope = ApiScope.STATS_READ

    def visible_links(self, **filters):
        """The short URLs the caller sees (staff: all; an API key: its workspace's), revoked
        ones left out as deleted, as in the overview."""
        return link_list(
            user=self.request.user,
            owned_only=False,
            archived=True,
            include_revoked=False,
            workspace_id=self.pinned_workspace_id,
            **filters,
        )

    def visits_page(self, *, link: UrlLink | None = None, links=None) -> Response:
        request = self.request
        params = request.query_params
        dates = validated(DateRangeSerializer, params)
        visits = visit_list(
            link=link,
            links=links,
            include_bots=not _flag(params, "excludeBots"),
            start=dates.get("startDate"),
            end=dates.get("endDate"),
        )
        rows, pagination = shapes.page(
            visits,
            page_number=_page_number(params),
            per_page=_per_page(params, default=VISITS_PER_PAGE, cap=VISITS_PER_PAGE),
        )
        if link is not None:
            visited = link_short_url(link, request=request)
            data = [shapes.visit(record, visited_url=visited) for record in rows]
        else:
            data = [
                shapes.visit(record, visited_url=link_short_url(record.link, request=request))
                for record in rows
            ]
        return Response({"visits": {"data": data, "pagination": pagination}})


class ShortUrlVisitsView(VisitsListView):
    def get(self, request, short_code: str):
        return self.visits_page(link=self.get_link(short_code))

    def delete(self, request, short_code: str):
        """Every visit of the short URL and every count kept of them
        (analytics.services.link_visits_delete), for those who may change it (a viewer: 403)."""
        link = self.get_link(short_code)
        link = link_get_changeable(
            code=link.code,
            domain=link.domain_host,
            user=request.user,
            request_host=request.get_host(),
            workspace_id=self.pinned_workspace_id,
        )
        return Response({"deletedVisits": link_visits_delete(link=link)})


class TagVisitsView(VisitsListView):
    def get(self, request, tag: str):
        """The visits of the caller's short URLs carrying the tag (of the key's workspace, else
        the personal one's; any case). An unknown tag: Shlink's tag-not-found. `domain` (4.6):
        only its short URLs' (`DEFAULT`: the default domain's; a host of no domain: none)."""
        found = tag_get(user=request.user, name=tag, workspace_id=self.pinned_workspace_id)
        host = request.get_host()
        links = link_list(
            user=request.user,
            owned_only=False,
            archived=True,
            include_revoked=False,
            workspace_id=found.workspace_id,
            tags=[found.name],
            domain=_domain_filter(request.query_params, request_host=host),
            request_host=host,
        )
        return self.visits_page(links=links)


class DomainVisitsView(VisitsListView):
    def get(self, request, domain: str):
        """The visits of the caller's short URLs on the domain (`DEFAULT`, or the default
        domain's own host, for the default one). A domain the caller may not use (not in
        GET /rest/v3/domains): Shlink's domain-not-found."""
        host = request.get_host()
        name = default_domain_host(host) if domain == "DEFAULT" else domain
        domain_id = domain_id_for_name(name, request_host=host)
        usable = domain_list_for(user=request.user, workspace_id=self.pinned_workspace_id)
        if domain_id is None or not usable.filter(pk=domain_id).exists():
            raise DomainNotFound(domain)
        return self.visits_page(links=self.visible_links(domain=name, request_host=host))


class NonOrphanVisitsView(VisitsListView):
    def get(self, request):
        """The visits of every short URL the caller sees (the overview's nonOrphanVisits);
        `domain` (4.6): of its short URLs only, as on a tag's."""
        host = request.get_host()
        domain = _domain_filter(request.query_params, request_host=host)
        return self.visits_page(links=self.visible_links(domain=domain, request_host=host))


class TagsView(ShlinkView):
    def get(self, request):
        # A workspace's tags: an API key's own workspace's, else the personal one's.
        tags = tag_list(user=request.user, workspace_id=self.pinned_workspace_id)
        names = [tag.name for tag in tags]
        search = request.query_params.get("searchTerm", "").strip().lower()
        if search:
            names = [name for name in names if search in name.lower()]
        rows, pagination = shapes.page(names, page_number=1, per_page=None)
        return Response({"tags": {"data": rows, "pagination": pagination}})

    def put(self, request):
        """Rename a tag of the key's workspace (else the personal one). Onto another tag's name
        is Shlink's conflict (409), not the native API's merge."""
        data = validated(RenameTagSerializer, request.data)
        tag_rename(
            user=request.user,
            workspace_id=self.pinned_workspace_id,
            tag=data["oldName"],
            new_name=data["newName"],
            merge=False,
        )
        return Response(status=204)

    def delete(self, request):
        """Delete the `tags[]` named (unknown names skipped, as Shlink does); links stay."""
        params = request.query_params
        tag_delete_many(
            user=request.user,
            workspace_id=self.pinned_workspace_id,
            tags=params.getlist("tags[]") or params.getlist("tags"),
        )
        return Response(status=204)


class RenameTagSerializer(serializers.Serializer):
    oldName = serializers.CharField()
    newName = serializers.CharField(allow_blank=True, trim_whitespace=False)


class TagsStatsView(ShlinkView):
    read_scope = ApiScope.STATS_READ

    def get(self, request):
        # A workspace's tags (an API key's own workspace, else the personal one) and that
        # workspace's links, revoked ones left out as deleted.
        workspace_id = workspace_id_or_personal(
            user=request.user, workspace_id=self.pinned_workspace_id
        )
        tags = list(tag_list(user=request.user, workspace_id=workspace_id))
        links = link_list(
            user=request.user, archived=True, include_revoked=False, workspace_id=workspace_id
        )
        ids = list(links.values_list("pk", flat=True))
        totals = link_click_totals(link_ids=ids, people=False)
        per_tag: dict[str, dict[str, int]] = defaultdict(lambda: {"clicks": 0, "bot_clicks": 0})
        counts: dict[str, int] = defaultdict(int)
        for link_id, names in link_tag_names(link_ids=ids).items():
            for name in names:
                counts[name] += 1
                per_tag[name]["clicks"] += totals[link_id]["clicks"]
                per_tag[name]["bot_clicks"] += totals[link_id]["bot_clicks"]
        data = [
            {
                "tag": tag.name,
                "shortUrlsCount": counts[tag.name],
                "visitsSummary": shapes.visits_summary(per_tag[tag.name]),
            }
            for tag in tags
        ]
        rows, pagination = shapes.page(data, page_number=1, per_page=None)
        return Response({"tags": {"data": rows, "pagination": pagination}})


class DomainsView(ShlinkView):
    def get(self, request):
        """The domains the key may put links on (links.selectors.domain_list_for: a domain kept
        for another workspace is not listed), with their redirects only for those who manage
        domains: where a domain sends people is its managers' business. Shlink answers a key
        that may not see them with nulls, as here."""
        # The default domain with its port, if any: clients call each domain (the SDK's health
        # check on it), so it must be where they reach this server.
        default_host = default_domain_authority(request.get_host())
        domains = list(domain_list_for(user=request.user, workspace_id=self.pinned_workspace_id))
        default = next((d for d in domains if d.pk == DEFAULT_DOMAIN_ID), None)
        managed = domains_managed_by(request.user)
        data = [
            {
                "domain": domain.host or default_host,
                "isDefault": domain.is_default,
                "redirects": shapes.redirects(domain if managed else None),
            }
            for domain in domains
        ]
        defaults = shapes.redirects(default if managed else None)
        return Response({"domains": {"data": data, "defaultRedirects": defaults}})


class DomainRedirectsSerializer(serializers.Serializer):
    """Shlink's body: the domain's authority, and the redirects to set (a field left out keeps
    what the domain has; null or "" removes it)."""

    domain = serializers.CharField()
    baseUrlRedirect = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    regular404Redirect = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    invalidShortUrlRedirect = serializers.CharField(
        required=False, allow_null=True, allow_blank=True
    )


# Shlink's redirect names → domain_save's keywords (the Domain's fields).
DOMAIN_REDIRECTS = {
    "baseUrlRedirect": "root_redirect",
    "invalidShortUrlRedirect": "not_found_redirect",
}


class DomainRedirectsView(ShlinkView):
    def patch(self, request):
        """Set a domain's redirects through links.services.domains.domain_save, as the admin and
        `manage.py domains` do (the same long-URL rules), for those who manage domains only
        (others: 403). The domain is one the key may use (GET /rest/v3/domains lists it; its
        authority, with or without the port, or DEFAULT); an unknown one is Shlink's
        domain-not-found, not a new domain. The default domain is its Domain row: its
        unknown-codes redirect may be set, its root (the site's home page) may not."""
        if not domains_managed_by(request.user):
            raise PermissionDenied("Domain redirects are set by staff who manage domains only.")
        data = validated(DomainRedirectsSerializer, request.data)
        if (data.get("regular404Redirect") or "").strip():
            raise InvalidArgument(
                {
                    "regular404Redirect": [
                        "Not supported here: only a domain's root and its unknown short codes "
                        "are redirected; other paths answer the 404 page."
                    ]
                }
            )
        host = request.get_host()
        name = default_domain_host(host) if data["domain"] == "DEFAULT" else data["domain"]
        domain_id = domain_id_for_name(name, request_host=host)
        usable = domain_list_for(user=request.user, workspace_id=self.pinned_workspace_id)
        domain = usable.filter(pk=domain_id).first() if domain_id is not None else None
        if domain is None:
            raise DomainNotFound(data["domain"])
        redirects = {
            field: getattr(domain, field) if shlink not in data else (data[shlink] or "")
            for shlink, field in DOMAIN_REDIRECTS.items()
        }
        domain = domain_save(domain=domain, host=domain.host, **redirects)
        return Response(shapes.redirects(domain))


class VisitsOverviewView(ShlinkView):
    read_scope = ApiScope.STATS_READ

    def get(self, request):
        """Visits of every short URL the caller sees (staff: all), revoked ones left out as
        deleted; orphan visits (unknown codes, bare roots, unknown hosts) for staff, 0 for
        others, as Shlink answers a key without access to them."""
        links = link_list(
            user=request.user,
            owned_only=False,
            archived=True,
            include_revoked=False,
            workspace_id=self.pinned_workspace_id,
        )
        summary = shapes.visits_summary(link_click_sum(links=links))
        orphan_total = orphan_visit_total() if orphan_visits_visible(request.user) else 0
        # Orphan counts keep no User-Agent: none is flagged as a bot (see shapes.orphan_visit).
        orphans = shapes.visits_summary({"clicks": orphan_total, "bot_clicks": 0})
        return Response(
            {
                "visits": {
                    "nonOrphanVisits": summary,
                    "orphanVisits": orphans,
                    # Shlink 2.x's names, still read by older dashboards.
                    "visitsCount": summary["total"],
                    "orphanVisitsCount": orphans["total"],
                }
            }
        )


class OrphanVisitsView(ShlinkView):
    read_scope = ApiScope.STATS_READ

    def get(self, request):
        """Orphan visits one by one, newest first, expanded from the hourly counts for the page
        asked only (analytics.selectors.orphan_visit_slice). Staff only: others get an empty
        list, as Shlink answers a key without access to them. `domain` (4.6): the requests
        for that host only (`DEFAULT`: the default domain's)."""
        params = request.query_params
        dates = validated(DateRangeSerializer, params)
        _flag(params, "excludeBots")  # checked, changes nothing: no orphan visit is a bot here
        kinds = None
        if params.get("type"):
            kind = shapes.ORPHAN_KINDS.get(params["type"])
            if kind is None:
                expected = ", ".join(shapes.ORPHAN_KINDS)
                raise InvalidArgument({"type": [f"Expected one of {expected}."]})
            kinds = [kind]
        page_number = _page_number(params)
        per_page = _per_page(params, default=VISITS_PER_PAGE, cap=VISITS_PER_PAGE)
        total, rows = 0, []
        if orphan_visits_visible(request.user):
            window = {
                "start": dates.get("startDate"),
                "end": dates.get("endDate"),
                "kinds": kinds,
                "host": _orphan_host(params, request_host=request.get_host()),
            }
            total = orphan_visit_total(**window)
            rows = orphan_visit_slice(offset=(page_number - 1) * per_page, limit=per_page, **window)
        data = shapes.orphan_visits(rows, request=request)
        pagination = shapes.pagination(
            total=total, page_number=page_number, per_page=per_page, in_page=len(data)
        )
        return Response({"visits": {"data": data, "pagination": pagination}})

    def delete(self, request):
        """Every orphan visit count of the install (analytics.services.orphan_visits_delete),
        staff only: others 403 (Shlink answers a key without orphan visits 0 instead)."""
        if not orphan_visits_visible(request.user):
            raise PermissionDenied("Orphan visits are deleted by staff only.")
        return Response({"deletedVisits": orphan_visits_delete()})


class MercureInfoView(ShlinkView):
    def get(self, request):
        """Live updates through a Mercure hub are not offered: Shlink's own answer for that,
        which dashboards take as "no live updates"."""
        raise MercureNotConfigured()


class HealthView(ShlinkView):
    """Shlink's health check, no key needed: pass while the database answers. Rate limited per
    client IP like the API's anonymous callers."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [AnonThrottle]

    def get(self, request):
        up = check_database() is None
        body = {
            "status": "pass" if up else "fail",
            "version": SHLINK_API_VERSION,
            "links": {
                "about": "https://shlink.io",
                "project": "https://github.com/shlinkio/shlink",
            },
        }
        return Response(body, status=200 if up else 503, content_type=HEALTH_JSON)
