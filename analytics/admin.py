"""Admin for staff: raw visits, hourly counts and reported conversions, all read-only (the
pipeline and the track API write them), but for erasing visitors' raw visits on request."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet, Sum
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.text import Truncator

from analytics import services
from analytics.charts import chart_data
from analytics.models import Conversion, HourlyClick, VisitRecord
from analytics.templatetags.conversions import money
from core.admin_base import ReadOnlyAdminMixin, short_date
from workspaces.models import Workspace

# The chart above the hourly list shows at most this many of the newest hours of the selection.
HOURLY_CHART_HOURS = 24 * 14


@admin.register(VisitRecord)
class VisitRecordAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    # Eight columns, some of them two fields, so the list fits a laptop beside its filters.
    list_display = (
        "time",
        "code",
        "place",
        "browser_type",
        "os_type",
        "device_type",
        "bot",
        "referrer_short",
    )
    list_display_links = ("time",)
    list_filter = ("is_bot", "bot_kind", "channel", "device_type", "browser_type", "country")
    search_fields = ("=code", "=client_id", "=client_ip")
    date_hierarchy = "visit_time"
    ordering = ("-visit_time", "-id")
    list_per_page = 100
    # Visits are the biggest table: no COUNT(*) of all of it on every page.
    show_full_result_count = False
    raw_id_fields = ("link",)
    actions = ("erase_visitors",)

    def has_erase_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("analytics.delete_visitrecord")

    @admin.action(
        description="Erase these visitors' raw visits in their workspaces (counts kept)",
        permissions=["erase"],
    )
    def erase_visitors(self, request: HttpRequest, queryset: QuerySet) -> None:
        """An erasure request from the admin: every raw visit of each selected visit's visitor
        (its client_id) across its link's workspace, as the API and erase_visitor do."""
        pairs = set(queryset.values_list("link__workspace", "client_id").order_by().distinct())
        visits, link_ids = 0, set()
        for workspace_id, client_id in sorted(pairs, key=lambda pair: (pair[0] or 0, pair[1])):
            workspace = Workspace.objects.filter(pk=workspace_id).first()
            if workspace is None:
                continue
            deleted = services.visitor_visits_erase(workspace=workspace, visitor=client_id)
            visits += deleted.visits
            link_ids |= deleted.link_ids
        self.message_user(
            request,
            f"Erased {visits} raw visit(s) of {len(pairs)} visitor(s) over {len(link_ids)} "
            "link(s); every count they made is kept.",
            messages.SUCCESS,
        )

    @admin.display(description="visit time", ordering="visit_time")
    def time(self, visit: VisitRecord) -> str:
        return short_date(visit.visit_time)

    @admin.display(description="place", ordering="country")
    def place(self, visit: VisitRecord) -> str:
        return ", ".join(part for part in (visit.city, visit.country) if part) or "—"

    @admin.display(description="bot", ordering="bot_name")
    def bot(self, visit: VisitRecord) -> str:
        if not visit.is_bot:
            return "—"
        kind = visit.get_bot_kind_display()
        return f"{visit.bot_name or 'yes'} ({kind})" if kind else visit.bot_name or "yes"

    @admin.display(description="referrer", ordering="referrer")
    def referrer_short(self, visit: VisitRecord) -> str:
        return Truncator(visit.referrer).chars(50) or "—"


@admin.register(HourlyClick)
class HourlyClickAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("link_code", "hour", "clicks", "unique_visitors", "bot_clicks", "updated_at")
    list_select_related = ("link",)
    list_filter = ("hour",)
    search_fields = ("=link__code",)
    date_hierarchy = "hour"
    ordering = ("-hour", "link_id")
    list_per_page = 100
    show_full_result_count = False
    raw_id_fields = ("link",)
    change_list_template = "admin/analytics/hourlyclick/change_list.html"

    @admin.display(description="link", ordering="link__code")
    def link_code(self, row: HourlyClick) -> str:
        return row.link.code

    def changelist_view(self, request: HttpRequest, extra_context=None) -> TemplateResponse:
        response = super().changelist_view(request, extra_context)
        context = getattr(response, "context_data", None)
        if context and "cl" in context:
            # The chart follows the list's filters and search: one grouped query over them.
            context["chart"] = self._chart(context["cl"].queryset)
        return response

    def _chart(self, queryset: QuerySet[HourlyClick]) -> dict:
        per_hour = list(
            queryset.order_by()
            .values("hour")
            .annotate(
                clicks=Sum("clicks"),
                unique_visitors=Sum("unique_visitors"),
                bot_clicks=Sum("bot_clicks"),
            )
            .order_by("-hour")[:HOURLY_CHART_HOURS]
        )
        per_hour.reverse()
        if not per_hour:
            return {}
        return chart_data(per_hour)


@admin.register(Conversion)
class ConversionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The leads and sales sites reported (POST /api/v1/track/lead and /track/sale), to look a
    report up by its click, customer or invoice when a figure is questioned."""

    list_display = (
        "time",
        "kind",
        "link_code",
        "event_name",
        "customer_id",
        "amount_shown",
        "country_code",
        "device_type",
    )
    list_display_links = ("time",)
    list_select_related = ("link",)
    list_filter = ("kind", "currency", "device_type")
    search_fields = ("=click_id", "=customer_id", "=invoice_id", "=link__code")
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")
    list_per_page = 100
    show_full_result_count = False
    raw_id_fields = ("link", "workspace")
    exclude = ("once_key",)  # a hash of what makes a report a repeat: nothing to read

    @admin.display(description="reported", ordering="created_at")
    def time(self, row: Conversion) -> str:
        return short_date(row.created_at)

    @admin.display(description="link", ordering="link__code")
    def link_code(self, row: Conversion) -> str:
        return row.link.code

    @admin.display(description="amount", ordering="amount")
    def amount_shown(self, row: Conversion) -> str:
        return money(row.amount, row.currency) if row.currency else "—"
