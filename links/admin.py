"""Admin for staff: review every link with its clicks, revoke abuse, watch and refill the code pool.

Rows are read-only here: links change through links.services (cache refresh, validation), so the
admin offers actions that call those services instead of an edit form.
"""

from __future__ import annotations

import base64

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, F, Min, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.http.request import validate_host
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from core.admin_base import ReadOnlyAdminMixin, short_date
from links.cache import CacheUnavailable, idn_ascii_url
from links.codes import pool
from links.domains import WELL_KNOWN_PATHS, host_form
from links.forms import split_tags
from links.models import (
    Domain,
    LinkStatus,
    QrDesign,
    Tag,
    UniqueCode,
    UniqueCodeStatus,
    UrlLink,
    tag_key,
)
from links.selectors import default_domain_host, link_recent_checks
from links.services import qr_design
from links.services.bulk_change import CHANGED, REFUSED, link_change_many
from links.services.change import link_cache_refresh, link_revoke, link_update
from links.services.domains import (
    KEEP_WORKSPACE,
    domain_delete,
    domain_save,
    domain_validate,
    domain_workspace_check,
)
from links.services.gates import visits_used
from links.services.policy import LinkRevoked
from links.services.targeting import describe_rule
from links.shortlinks import link_page_url, link_short_url

admin.site.site_header = "shorturl administration"
admin.site.site_title = "shorturl admin"
admin.site.index_title = "Links, visits and the code pool"
# The app list beside every page took a third of a laptop's width from the lists; the index
# and the breadcrumbs lead everywhere it did.
admin.site.enable_nav_sidebar = False


class LinkStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return LinkStatus.choices

    def queryset(self, request, queryset):
        if self.value() in LinkStatus.values:
            return queryset.with_status(self.value())
        return queryset


class LinkTagFilter(admin.SimpleListFilter):
    """Links by tag name, any owner's and any case (tags are per owner: one name may be many
    owners' tags). The most used names are offered."""

    title = "tag"
    parameter_name = "tag"
    OFFERED = 30

    def lookups(self, request, model_admin):
        rows = (
            Tag.objects.values("key")
            .annotate(n=Count("links"), name=Min("name"))
            .order_by("-n", "key")[: self.OFFERED]
        )
        return [(row["key"], row["name"]) for row in rows]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(tags__key=tag_key(self.value())).distinct()
        return queryset


class LinkWorkspaceFilter(admin.SimpleListFilter):
    """Links by workspace: team workspaces first, then the personal ones with the most links
    (one per user, too many to list them all). Any workspace by `?workspace=<slug>`."""

    title = "workspace"
    parameter_name = "workspace"
    OFFERED = 30

    def lookups(self, request, model_admin):
        from workspaces.models import Workspace

        rows = (
            Workspace.objects.annotate(n=Count("links"))
            .filter(n__gt=0)
            .order_by(F("personal_for").asc(nulls_first=True), "-n", "slug")
            .values_list("slug", "name")[: self.OFFERED]
        )
        return list(rows)

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(workspace__slug=self.value().strip().lower())
        return queryset


class BulkChangeActionForm(ActionForm):
    """The changelist's action bar: what the bulk actions set (links.services.bulk_change)."""

    tags = forms.CharField(
        required=False, label="Tags", help_text="Comma-separated, for the tag actions."
    )
    expires_at = forms.DateTimeField(
        required=False,
        label="Expiry",
        help_text="YYYY-MM-DD HH:MM, for “Set the expiry”; empty removes it.",
    )
    workspace = forms.CharField(
        required=False, label="Workspace", help_text="Its slug, for “Move”."
    )


@admin.register(UrlLink)
class UrlLinkAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "short_link",
        "long_url_short",
        "owner",
        "clicks",
        "created",
        "starts",
        "expires",
        "status_label",
        "health_label",
    )
    list_display_links = ("long_url_short",)
    list_select_related = ("owner", "domain", "workspace")
    list_filter = (
        LinkStatusFilter,
        "health_status",
        LinkWorkspaceFilter,
        "domain",
        "archived",
        LinkTagFilter,
        "redirect_type",
        "code_type",
        "created_at",
        "valid_since",
        "expires_at",
    )
    search_fields = ("=code", "long_url", "title")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")
    list_per_page = 50
    # Skips a second COUNT(*) over the whole table on every page of a big list.
    show_full_result_count = False
    actions = (
        "revoke_links",
        "refresh_link_cache",
        "archive_links",
        "unarchive_links",
        "set_link_tags",
        "add_link_tags",
        "set_link_expiry",
        "move_links",
    )
    action_form = BulkChangeActionForm
    # seq_id and long_url_hash are the code generator's and dedup's business, not staff's.
    fields = (
        "code",
        "domain",
        "short_url",
        "long_url_full",
        "title",
        "owner",
        "workspace",
        "status_label",
        "clicks",
        "redirect_type",
        "pass_query",
        "track_conversions",
        "tag_names",
        "archived",
        "password_protected",
        "visit_limit",
        "targeting",
        "social_preview",
        "expired_url",
        "health_label",
        "health_reason",
        "health_checked_at",
        "fallback_url",
        "recent_checks",
        "app_links",
        "code_type",
        "created_at",
        "updated_at",
        "starts",
        "expires",
        "revoked_at",
    )
    readonly_fields = fields
    change_form_template = "admin/links/urllink/change_form.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[UrlLink]:
        return super().get_queryset(request).with_total_clicks()

    @admin.display(description="code", ordering="code")
    def short_link(self, link: UrlLink) -> str:
        return format_html(
            '<a href="{}" target="_blank" rel="noopener" title="Open the short URL">{}</a>',
            link_short_url(link),
            link.code,
        )

    @admin.display(description="short URL")
    def short_url(self, link: UrlLink) -> str:
        url = link_short_url(link)
        stats = link_page_url("link_stats", link)
        return format_html(
            '<a href="{}" target="_blank" rel="noopener">{}</a> · <a href="{}">stats page</a>',
            url,
            url,
            stats,
        )

    @admin.display(description="long URL")
    def long_url_full(self, link: UrlLink) -> str:
        # A URL has no spaces to break at: without this it runs off the page.
        shown = format_html(
            '<span class="long-url-wrap" style="overflow-wrap:anywhere">{}</span>', link.long_url
        )
        ascii_url = idn_ascii_url(link.long_url)
        if ascii_url is None:
            return shown
        # An internationalised host may be a look-alike (аpple.com, a Cyrillic а): its ASCII
        # form is what staff reviewing abuse need to see.
        return format_html(
            '{}<div class="ascii-url" style="overflow-wrap:anywhere">ASCII form: <code>{}</code>'
            "</div>",
            shown,
            ascii_url,
        )

    @admin.display(description="health", ordering="health_status")
    def health_label(self, link: UrlLink) -> str:
        """The destination's health (links.services.health) and since when."""
        label = link.get_health_status_display()
        if link.health_since is None:
            return label
        return f"{label} since {short_date(link.health_since)}"

    @admin.display(description="destination checks")
    def recent_checks(self, link: UrlLink) -> str:
        """The health checker's latest checks (links.services.health), newest first: only the
        checker writes them."""
        checks = link_recent_checks(link=link, limit=20)
        if not checks:
            return "— (not checked yet)"
        rows = format_html_join(
            "",
            "<li>{} · {} · {} · {} ms · {}</li>",
            (
                (
                    short_date(check.checked_at),
                    check.url,
                    check.status_code or "no answer",
                    check.elapsed_ms,
                    "OK" if check.ok else check.get_error_display(),
                )
                for check in checks
            ),
        )
        details = format_html_join(
            "", "<li>{}</li>", ((check.detail,) for check in checks if check.detail)
        )
        return format_html(
            '<ul class="link-checks" style="margin:0;overflow-wrap:anywhere">{}</ul>'
            '<ul class="link-check-details" style="margin:0">{}</ul>',
            rows,
            details,
        )

    @admin.display(description="social preview")
    def social_preview(self, link: UrlLink) -> str:
        """What link-preview fetchers are shown (edited on the link's form, as the rest)."""
        if not link.has_preview:
            return "— (fetchers get the redirect)"
        return format_html_join(
            "",
            '<div style="overflow-wrap:anywhere">{}: {}</div>',
            [
                (label, value or "—")
                for label, value in (
                    ("title", link.og_title),
                    ("description", link.og_description),
                    ("image", link.og_image),
                )
            ],
        )

    @admin.display(description="app links")
    def app_links(self, link: UrlLink) -> str:
        """Where iOS and Android visitors go when no rule took them (edited in the "App links"
        box below, through the services)."""
        if not (link.ios_url or link.android_url):
            return "— (every visitor goes to the long URL)"
        return format_html_join(
            "",
            '<div style="overflow-wrap:anywhere">{} → {}</div>',
            [
                (label, value)
                for label, value in (("iOS", link.ios_url), ("Android", link.android_url))
                if value
            ],
        )

    @admin.display(description="rules and variants")
    def targeting(self, link: UrlLink) -> str:
        """Each rule as "device mobile, country CN → url", each variant as "70% → url"."""
        lines = [(describe_rule(rule), rule.get("url", "")) for rule in link.rules or ()]
        lines += [
            (f"{variant.get('weight')}%", variant.get("url", "")) for variant in link.variants or ()
        ]
        if not lines:
            return "—"
        return format_html_join(
            "",
            '<div style="overflow-wrap:anywhere">{} → {}</div>',
            lines,
        )

    @admin.display(description="long URL", ordering="long_url")
    def long_url_short(self, link: UrlLink) -> str:
        ascii_url = idn_ascii_url(link.long_url)
        if ascii_url is None:
            return Truncator(link.long_url).chars(50)
        return format_html(
            "{}<br><small>ASCII: {}</small>",
            Truncator(link.long_url).chars(50),
            Truncator(ascii_url).chars(50),
        )

    @admin.display(description="created", ordering="created_at")
    def created(self, link: UrlLink) -> str:
        return short_date(link.created_at)

    @admin.display(description="starts", ordering="valid_since")
    def starts(self, link: UrlLink) -> str:
        # Before it the link is scheduled (LinkStatus): visitors get "not live yet".
        return short_date(link.valid_since) if link.valid_since else "—"

    @admin.display(description="expires", ordering="expires_at")
    def expires(self, link: UrlLink) -> str:
        # A revoke sets expires_at to its own moment: "revoked <when>", not a past expiry.
        if link.ended_at is not None:
            return f"{link.status} {short_date(link.ended_at)}"
        return short_date(link.expires_at) if link.expires_at else "never"

    @admin.display(description="clicks", ordering="total_clicks")
    def clicks(self, link: UrlLink) -> int:
        return link.total_clicks

    @admin.display(description="tags")
    def tag_names(self, link: UrlLink) -> str:
        return ", ".join(tag.name for tag in link.tags.order_by("key")) or "—"

    @admin.display(description="password", boolean=True)
    def password_protected(self, link: UrlLink) -> bool:
        return bool(link.password_hash)  # the hash itself is never shown

    @admin.display(description="visit limit")
    def visit_limit(self, link: UrlLink) -> str:
        if link.max_visits is None:
            return "none"
        return f"{visits_used(link):,} of {link.max_visits:,} used"

    @admin.display(description="status")
    def status_label(self, link: UrlLink) -> str:
        # The row's visit count: a capped link shows "Visit limit reached" within seconds of it.
        return link.status.label

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("links.change_urllink")

    def get_urls(self):
        revoke = self.admin_site.admin_view(require_POST(self.revoke_view))
        gates = self.admin_site.admin_view(require_POST(self.gates_view))
        app_links = self.admin_site.admin_view(require_POST(self.app_links_view))
        return [
            path("<int:object_id>/revoke/", revoke, name="links_urllink_revoke"),
            path("<int:object_id>/gates/", gates, name="links_urllink_gates"),
            path("<int:object_id>/app-links/", app_links, name="links_urllink_app_links"),
            *super().get_urls(),
        ]

    def revoke_view(self, request: HttpRequest, object_id: int) -> HttpResponseRedirect:
        link = get_object_or_404(UrlLink, pk=object_id)
        if not self.has_revoke_permission(request):
            self.message_user(request, "You may not revoke links.", level=messages.ERROR)
        else:
            try:
                link_revoke(code=link.code, domain=link.domain_host, user=request.user)
            except CacheUnavailable as error:
                self.message_user(request, f"{link.code}: {error}", level=messages.ERROR)
            else:
                self.message_user(
                    request, f"Revoked {link.code}: it answers 410 from now on.", messages.SUCCESS
                )
        return HttpResponseRedirect(reverse("admin:links_urllink_change", args=[link.pk]))

    def gates_view(self, request: HttpRequest, object_id: int) -> HttpResponseRedirect:
        """Set or clear a link's password and visit limit, through links.services (the rules,
        the cache drop) like every other change."""
        link = get_object_or_404(UrlLink, pk=object_id)
        back = HttpResponseRedirect(reverse("admin:links_urllink_change", args=[link.pk]))
        if not self.has_revoke_permission(request):
            self.message_user(request, "You may not change links.", level=messages.ERROR)
            return back
        changes: dict = {}
        if request.POST.get("remove_password"):
            changes["password"] = None
        elif request.POST.get("password"):
            changes["password"] = request.POST["password"]
        limit = request.POST.get("max_visits", "").strip()
        if limit.isdigit() or limit == "":
            changes["max_visits"] = int(limit) if limit else None
        else:
            self.message_user(request, "Enter the visit limit as a whole number.", messages.ERROR)
            return back
        self._change_link(request, link, changes, saved=f"Saved the gates of {link.code}.")
        return back

    # The labels a refusal is prefixed with in the admin's messages (its fields are not the form's).
    _FIELD_LABELS = {"ios_url": "iOS URL", "android_url": "Android URL"}

    def _change_link(self, request: HttpRequest, link: UrlLink, changes: dict, *, saved: str):
        """link_update with `changes`, every refusal (a rule's, a revoked link's, the cache's)
        told as an error message instead of a server error."""
        try:
            link_update(code=link.code, domain=link.domain_host, user=request.user, **changes)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                label = self._FIELD_LABELS.get(field)
                for problem in problems:
                    text = f"{label}: {problem}" if label else problem
                    self.message_user(request, text, level=messages.ERROR)
        except (CacheUnavailable, LinkRevoked) as error:
            self.message_user(request, str(error), level=messages.ERROR)
        else:
            self.message_user(request, saved, messages.SUCCESS)

    def app_links_view(self, request: HttpRequest, object_id: int) -> HttpResponseRedirect:
        """Set or clear a link's iOS and Android URLs through links.services (the rules of
        links.services.app_links, the cache refresh), as the gates are."""
        link = get_object_or_404(UrlLink, pk=object_id)
        back = HttpResponseRedirect(reverse("admin:links_urllink_change", args=[link.pk]))
        if not self.has_revoke_permission(request):
            self.message_user(request, "You may not change links.", level=messages.ERROR)
            return back
        changes = {field: request.POST.get(field, "") for field in ("ios_url", "android_url")}
        self._change_link(request, link, changes, saved=f"Saved the app links of {link.code}.")
        return back

    def change_view(self, request, object_id, form_url="", extra_context=None):
        link = self.get_object(request, object_id)
        extra_context = {
            **(extra_context or {}),
            "can_revoke": self.has_revoke_permission(request),
            # Tags, UTM, rules, variants, archived and the destination are edited where
            # marketers edit them, the dashboard's form: one form and one service, not a second
            # editor here. Staff who may change links may open any link's form there.
            "edit_url": link_page_url("link_edit", link) if link is not None else "",
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.action(
        description="Revoke selected links (they answer 410 at once)", permissions=["revoke"]
    )
    def revoke_links(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        self._bulk_change(request, queryset, {"revoked": True}, done="Revoked")

    def _bulk_change(
        self, request: HttpRequest, queryset: QuerySet[UrlLink], changes: dict, *, done: str
    ) -> None:
        """Apply `changes` to the selected links through the bulk change service (the rules
        every channel follows) and say what became of each."""
        ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        try:
            results = link_change_many(user=request.user, ids=ids, changes=changes)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                self.message_user(request, f"{field}: {' '.join(problems)}", level=messages.ERROR)
            return
        except (CacheUnavailable, PermissionDenied) as error:
            self.message_user(request, str(error), level=messages.ERROR)
            return
        changed = sum(result.outcome == CHANGED for result in results)
        self.message_user(request, f"{done} {changed} link(s).", level=messages.SUCCESS)
        for result in results:
            if result.outcome == REFUSED:
                reasons = " ".join(" ".join(problems) for problems in result.errors.values())
                # Not the code first: the admin capitalises a message's first letter.
                self.message_user(
                    request, f"Left {result.code} as it was: {reasons}", level=messages.WARNING
                )

    @admin.action(description="Archive selected links", permissions=["revoke"])
    def archive_links(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        self._bulk_change(request, queryset, {"archived": True}, done="Archived")

    @admin.action(description="Unarchive selected links", permissions=["revoke"])
    def unarchive_links(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        self._bulk_change(request, queryset, {"archived": False}, done="Unarchived")

    def _tags(self, request: HttpRequest) -> list[str]:
        return split_tags(request.POST.get("tags", ""))

    @admin.action(description="Set the tags of selected links (replace)", permissions=["revoke"])
    def set_link_tags(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        self._bulk_change(request, queryset, {"tags": self._tags(request)}, done="Tagged")

    @admin.action(description="Add tags to selected links", permissions=["revoke"])
    def add_link_tags(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        self._bulk_change(request, queryset, {"add_tags": self._tags(request)}, done="Tagged")

    @admin.action(description="Set the expiry of selected links", permissions=["revoke"])
    def set_link_expiry(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        field = BulkChangeActionForm.base_fields["expires_at"]
        try:
            expiry = field.clean(request.POST.get("expires_at", ""))
        except ValidationError as error:
            self.message_user(request, f"expires_at: {' '.join(error.messages)}", messages.ERROR)
            return
        self._bulk_change(request, queryset, {"expires_at": expiry}, done="Changed the expiry of")

    @admin.action(description="Move selected links to a workspace", permissions=["revoke"])
    def move_links(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        workspace = request.POST.get("workspace", "").strip()
        self._bulk_change(request, queryset, {"workspace": workspace}, done="Moved")

    @admin.action(
        description="Refresh the cached redirect of selected links", permissions=["revoke"]
    )
    def refresh_link_cache(self, request: HttpRequest, queryset: QuerySet[UrlLink]) -> None:
        links = list(queryset.order_by("pk"))
        try:
            for link in links:
                link_cache_refresh(link=link)
        except CacheUnavailable as error:
            self.message_user(request, str(error), level=messages.ERROR)
            return
        self.message_user(
            request,
            f"Dropped the cached entry of {len(links)} link(s); the next click reloads it.",
            level=messages.SUCCESS,
        )


@admin.register(UniqueCode)
class UniqueCodeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The pool as counts; a code's own row only when searched for (a list of random codes
    told staff nothing)."""

    list_display = ("code", "status", "created_at", "updated_at")
    search_fields = ("=code",)
    ordering = ("-id",)
    list_per_page = 100
    show_full_result_count = False
    actions = None
    change_list_template = "admin/links/uniquecode/change_list.html"

    def get_urls(self):
        refill = self.admin_site.admin_view(require_POST(self.refill_view))
        return [path("refill/", refill, name="links_uniquecode_refill"), *super().get_urls()]

    def has_refill_permission(self, request: HttpRequest) -> bool:
        return request.user.is_staff and request.user.has_perm("links.view_uniquecode")

    def _refill(self, request: HttpRequest) -> None:
        stored = pool.pool_refill(batch=settings.SHORTURL_POOL_BATCH)
        unused = pool.pool_status().get(UniqueCodeStatus.UNUSED)
        self.message_user(
            request,
            f"Added {stored} fresh codes to the pool; {unused} unused codes are ready.",
            level=messages.SUCCESS,
        )

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset.none(), False
        return super().get_search_results(request, queryset, search_term)

    def refill_view(self, request: HttpRequest) -> HttpResponseRedirect:
        if self.has_refill_permission(request):
            self._refill(request)
        else:
            self.message_user(request, "You may not refill the pool.", level=messages.ERROR)
        return HttpResponseRedirect(reverse("admin:links_uniquecode_changelist"))

    def changelist_view(self, request, extra_context=None) -> TemplateResponse:
        extra_context = {**(extra_context or {}), **pool.pool_report()}
        extra_context["can_refill"] = self.has_refill_permission(request)
        return super().changelist_view(request, extra_context)


def _association_widget() -> forms.Textarea:
    # JSON is read by its indentation: a fixed-width font, and no browser "correcting" it.
    return forms.Textarea(
        attrs={
            "rows": 8,
            "cols": 80,
            "spellcheck": "false",
            "autocomplete": "off",
            "style": "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
        }
    )


class DomainForm(forms.ModelForm):
    """Checked by links.services.domains, as every other way in would be."""

    class Meta:
        model = Domain
        fields = (
            "host",
            "root_redirect",
            "not_found_redirect",
            "workspace",
            "expired_redirect",
            "apple_app_site_association",
            "assetlinks",
        )
        widgets = {
            "apple_app_site_association": _association_widget(),
            "assetlinks": _association_widget(),
        }
        labels = {
            "apple_app_site_association": "Apple app-site-association",
            "assetlinks": "Android assetlinks.json",
        }
        help_texts = {
            "apple_app_site_association": (
                f"Served at {WELL_KNOWN_PATHS['apple_app_site_association']} on this domain, "
                'so iOS opens your app for its links: a JSON object, e.g. {"applinks": '
                '{"details": [{"appIDs": ["TEAMID.com.example.app"], "components": '
                '[{"/": "/*"}]}]}}. At most 128 KB; empty: 404.'
            ),
            "assetlinks": (
                f"Served at {WELL_KNOWN_PATHS['assetlinks']} on this domain, so Android opens "
                "your app for its links: a JSON array of statements, each with a "
                '"relation" list and a "target" object. At most 128 KB; empty: 404.'
            ),
        }

    def clean(self):
        data = super().clean()
        try:
            domain_validate(
                domain=self.instance if self.instance.pk else None,
                host=data.get("host", ""),
                root_redirect=data.get("root_redirect", ""),
                not_found_redirect=data.get("not_found_redirect", ""),
                expired_redirect=data.get("expired_redirect", ""),
                apple_app_site_association=data.get("apple_app_site_association", ""),
                assetlinks=data.get("assetlinks", ""),
            )
            domain_workspace_check(
                domain=self.instance if self.instance.pk else None,
                workspace=data.get("workspace", KEEP_WORKSPACE),
            )
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                for problem in problems:
                    self.add_error(field if field in self.fields else None, problem)
        return data

    def validate_unique(self):
        """domain_validate says so, in words: "There is a domain … already"."""


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    """The short domains links may be put on. Each needs DNS (and TLS) pointing at this service,
    and its host in ALLOWED_HOSTS for its password pages: the list says when it is missing."""

    form = DomainForm
    list_display = (
        "name",
        "root_redirect",
        "not_found_redirect",
        "expired_redirect",
        "app_files",
        "workspace",
        "link_count",
        "reachable",
    )
    search_fields = ("host",)
    autocomplete_fields = ("workspace",)  # every user has a workspace: too many for a menu

    def get_queryset(self, request: HttpRequest) -> QuerySet[Domain]:
        return (
            super()
            .get_queryset(request)
            .select_related("workspace")
            .annotate(n_links=Count("links"))
        )

    def get_search_results(self, request, queryset, search_term):
        # The search box takes the spellings `domains add` does (Bücher.example, a URL).
        return super().get_search_results(request, queryset, host_form(search_term))

    def get_fields(self, request, obj=None):
        if obj is not None and obj.is_default:
            # Its host is SHORT_URL_BASE's, its root the site's.
            return (
                "not_found_redirect",
                "expired_redirect",
                "apple_app_site_association",
                "assetlinks",
            )
        return super().get_fields(request, obj)

    @admin.display(description="domain", ordering="host")
    def name(self, domain: Domain) -> str:
        if domain.is_default:
            return f"{default_domain_host() or 'the site’s own host'} (default)"
        return domain.host

    @admin.display(description="app files served")
    def app_files(self, domain: Domain) -> str:
        paths = [(path,) for path in domain.served_files]
        return format_html_join("", "<div>{}</div>", paths) or "—"

    @admin.display(description="links", ordering="n_links")
    def link_count(self, domain: Domain) -> int:
        return domain.n_links

    @admin.display(description="password pages served")
    def reachable(self, domain: Domain) -> str:
        if domain.is_default or validate_host(domain.host, settings.ALLOWED_HOSTS):
            return "yes"
        return f"no: add {domain.host} to ALLOWED_HOSTS"

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is not None and obj.is_default:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change):
        domain_save(
            domain=obj if change else None,
            host=form.cleaned_data.get("host", ""),
            root_redirect=form.cleaned_data.get("root_redirect", ""),
            not_found_redirect=form.cleaned_data.get("not_found_redirect", ""),
            expired_redirect=form.cleaned_data.get("expired_redirect"),
            # None (a form without them): as they are.
            apple_app_site_association=form.cleaned_data.get("apple_app_site_association"),
            assetlinks=form.cleaned_data.get("assetlinks"),
            # The default domain's form has no workspace: it stays every workspace's.
            workspace=form.cleaned_data.get("workspace", KEEP_WORKSPACE),
        )

    def delete_model(self, request, obj):
        try:
            domain_delete(domain=obj)
        except ValidationError as error:
            self.message_user(request, " ".join(error.messages), level=messages.ERROR)

    def delete_queryset(self, request, queryset):
        for domain in queryset:
            self.delete_model(request, domain)


@admin.register(QrDesign)
class QrDesignAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The links' QR designs (#28), read-only: marketers change them on the QR page or the API."""

    list_display = ("link", "foreground", "background", "error_level", "has_logo", "updated_at")
    list_select_related = ("link",)
    search_fields = ("=link__code",)
    fields = ("link", "foreground", "background", "error_level", "logo_preview", "updated_at")
    readonly_fields = fields

    @admin.display(description="logo", boolean=True)
    def has_logo(self, design: QrDesign) -> bool:
        return bool(design.logo)

    @admin.display(description="logo")
    def logo_preview(self, design: QrDesign) -> str:
        """The stored PNG inline (a data URI: the logo file itself is never served)."""
        data = qr_design.logo_bytes(design)
        if data is None:
            return "—"
        return format_html(
            '<img src="data:image/png;base64,{}" alt="Logo of {}" style="max-width:128px">',
            base64.b64encode(data).decode("ascii"),
            design.link.code,
        )
