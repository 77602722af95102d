"""Dashboard pages: one link's stats (with CSV export of its visits), the workspace's tags, a
tag's stats and the staff overview.

Numbers come from analytics.selectors; these views pick the time range and shape the output.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Iterator
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET, require_http_methods

from analytics import ranges, selectors
from analytics.charts import breakdown_cards, breakdown_tables, chart_data
from analytics.enrich import asn_reader, city_db_path
from analytics.forms import StatsRangeForm, TagRenameForm, TimeRange
from core import geodata
from core.csv_cells import LineEcho, spreadsheet_safe
from core.forms import add_service_errors
from core.redis_conn import uses_redis
from links.cache import redirect_location
from links.codes import pool
from links.selectors import (
    TagNotFound,
    link_list,
    link_recent_checks,
    link_statuses,
    tag_get,
    tag_list,
)
from links.services.tags import TagNameTaken, tag_delete, tag_rename
from links.shortcuts import visible_link_or_404
from links.shortlinks import link_page_url, link_short_url
from workspaces.current import can_write_current, current_workspace


def _range_form(
    request: HttpRequest, *, default: str, first: dt.datetime | None
) -> tuple[StatsRangeForm, TimeRange]:
    form = StatsRangeForm(request.GET or None, default=default)
    return form, form.time_range(first=first)


def _period_query(form: StatsRangeForm, time_range: TimeRange) -> dict[str, str]:
    """The period shown, as query parameters for another stats page (a tag's links each open
    their own page on the same period); a period the form refused is the default one."""
    if time_range.key == "custom":
        data = form.cleaned_data
        return {
            "range": "custom",
            "start": data["start"].isoformat(),
            "end": data["end"].isoformat(),
        }
    return {"range": time_range.key}


def _period_stats(
    request: HttpRequest,
    *,
    link_ids: list[int],
    first: dt.datetime | None,
    kept: tuple[str, ...],
) -> dict:
    """What every stats page of links shows for the period chosen (tabs, custom range, the
    person's time zone): the range picker, the totals, the chart and the breakdown cards of
    `link_ids` summed (one link's page passes its own id). `kept` names the parameters the
    period's tabs and custom range carry over (what else the page shows: `rows`, `bots`…)."""
    form, time_range = _range_form(request, default="7d", first=first)
    bucket = selectors.series_bucket(time_range.start, time_range.end)
    every_row = request.GET.get("rows") == "all"
    stats = selectors.links_stats(
        link_ids=link_ids,
        start=time_range.start,
        end=time_range.end,
        limit=None if every_row else selectors.DEFAULT_LIMIT,
        bucket=bucket,
    )
    tables = breakdown_tables(stats)
    period = request.GET.copy()
    period.pop("rows", None)
    return {
        "form": form,
        "time_range": time_range,
        "range_choices": StatsRangeForm.RANGE_CHOICES,
        "stats": stats,
        "chart": chart_data(stats["series"], bucket),
        "breakdowns": tables,
        # The tables worth a card, and one line for the rest.
        "cards": breakdown_cards(tables, networks_named=asn_reader() is not None),
        "every_row": every_row,
        # The same period with every row, or back to the top rows.
        "period_query": period.urlencode(),
        # What the page shows, kept when the period changes (the tabs, the custom range).
        "view_params": [(name, request.GET[name]) for name in kept if name in request.GET],
        "credit_dbip": geodata.is_dbip_city(city_db_path()),
        "live_start": _live_start(time_range),
        # The conversions by the clicks' dimensions (stats_conversions.html), titled.
        "conversion_tables": [
            (key, title, stats["conversions"][key])
            for key, title in (
                ("countries", "country"),
                ("devices", "device"),
                ("referrers", "referrer"),
            )
        ],
    }


def _live_start(time_range: TimeRange) -> str | None:
    """The period's start for static/js/live-totals.js, which keeps its totals moving while the
    page is open; None (no live totals) for a period that ended before now."""
    if time_range.end <= timezone.now():
        return None
    return time_range.start.isoformat()


def _live_answer(request: HttpRequest, link_ids: list[int] | QuerySet | None) -> JsonResponse:
    """The page's totals from `?start=` (its period's, as _live_start gave it) up to now: what
    static/js/live-totals.js asks for every second (analytics.selectors.live_totals: one
    query). 400 for a missing or impossible start."""
    start = parse_datetime(request.GET.get("start", ""))
    if start is None or timezone.is_naive(start):
        return JsonResponse(
            {"start": ["Enter an ISO 8601 date and time with its offset."]}, status=400
        )
    try:
        ranges.check_moment(start)
    except ValidationError as error:
        return JsonResponse({"start": error.messages}, status=400)
    figures = selectors.live_totals(link_ids=link_ids, start=start)
    response = JsonResponse({**figures, "as_of": figures["as_of"].isoformat()})
    response["Cache-Control"] = "no-store"
    return response


@login_required
def link_stats(request: HttpRequest, code: str) -> HttpResponse:
    link = visible_link_or_404(request, code)
    # `domain` too: the same code on another short domain is another link.
    context = _period_stats(
        request, link_ids=[link.pk], first=link.created_at, kept=("domain", "rows", "bots")
    )
    time_range = context["time_range"]
    context["stats"]["uniques_exact_within"] = selectors.link_uniques_exact_within(link)
    # People only unless asked: bots and link previews would otherwise fill the list.
    show_bots = request.GET.get("bots") == "1"
    latest = list(selectors.latest_visits(link=link, limit=20, include_bots=show_bots))
    # With no visit by people listed, whether bots came at all decides what the section says.
    bots_only = not latest and not show_bots and selectors.has_visits(link=link)
    return render(
        request,
        "analytics/link_stats.html",
        {
            **context,
            "link": link,
            "short_url": link_short_url(link, request=request),
            # A/B variants side by side (clicks, people, share), when the link has them.
            "variants": selectors.variant_results(
                link=link,
                start=time_range.start,
                end=time_range.end,
                locations=[redirect_location(variant["url"]) for variant in link.variants],
            ),
            "latest_visits": latest,
            "show_bots": show_bots,
            "bots_only": bots_only,
            "status": link_statuses([link])[link.pk],  # by the live visit count, if capped
            "checks": link_recent_checks(link=link),  # destination health (issue #29)
        },
    )


@login_required
@require_GET
def link_live(request: HttpRequest, code: str) -> JsonResponse:
    """The link stats page's totals while it is open (see _live_answer)."""
    link = visible_link_or_404(request, code)
    return _live_answer(request, [link.pk])


def _my_links_query(name: str, *, archived: bool) -> str:
    """My links filtered by the tag, archived links shown when the tag has some (My links hides
    them unless asked, and a tag's counts include them)."""
    query = {"tag": name}
    if archived:
        query["archived"] = "on"
    return urlencode(query)


@login_required
def tags(request: HttpRequest) -> HttpResponse:
    """Every tag of the current workspace, A–Z (links.selectors.tag_list), with how many links
    carry it and their clicks, all time (analytics.selectors.tags_totals: the same numbers as
    the tag's page over "all time"); each opens its stats page and My links filtered by it.
    Renaming and deleting stay on the tag's page, for its owners and editors. Tags belong to
    a workspace: staff too see only their current workspace's."""
    workspace = current_workspace(request)
    found = list(tag_list(user=request.user, workspace_id=workspace.pk))
    totals = selectors.tags_totals(tag_ids=[tag.pk for tag in found])
    rows = [
        {
            "tag": tag,
            "my_links_query": _my_links_query(tag.name, archived=tag.archived_count > 0),
            **totals[tag.pk],
        }
        for tag in found
    ]
    return render(
        request,
        "analytics/tags.html",
        {"rows": rows, "may_change_tags": can_write_current(request)},
    )


def _links(count: int) -> str:
    return f"{count} link" if count == 1 else f"{count} links"


def _tag_change(
    request: HttpRequest, *, workspace_id: int, tag, form: TagRenameForm
) -> HttpResponse | TagNameTaken | None:
    """The tag page's POST (`action` rename or delete) through the tag services: a redirect
    with a message once done, None when the rename form has errors to show, TagNameTaken when
    the new name is another tag's: the page asks before merging the two, which it does only
    with `merge=confirmed`. A viewer meets the services' PermissionDenied (403)."""
    action = request.POST.get("action")
    if action == "delete":
        untagged = tag_delete(user=request.user, workspace_id=workspace_id, tag=tag.name)
        messages.success(
            request,
            f"Deleted the tag “{tag.name}”. It came off {_links(untagged)}; the links stay as "
            "they were.",
        )
        return redirect("dashboard")
    if action != "rename":
        return HttpResponse("Unknown action.", status=400)
    form.is_valid()
    try:
        renamed = tag_rename(
            user=request.user,
            workspace_id=workspace_id,
            tag=tag.name,
            new_name=form.cleaned_data.get("name", ""),
            merge=request.POST.get("merge") == "confirmed",
        )
    except ValidationError as error:
        add_service_errors(form, error)
        return None
    except TagNameTaken as taken:
        return taken
    if renamed.merged:
        messages.success(
            request,
            f"Merged “{tag.name}” into your existing tag “{renamed.name}”: its links carry "
            f"“{renamed.name}” now ({_links(renamed.link_count)} in all).",
        )
    elif renamed.name != tag.name:
        messages.success(request, f"Renamed the tag “{tag.name}” to “{renamed.name}”.")
    else:
        messages.info(request, f"The tag is already called “{renamed.name}”.")
    return redirect("tag_stats", renamed.name)


def _tag_and_links(request: HttpRequest, tag: str) -> tuple:
    """(current workspace, its tag named `tag`, the tag's links as a query): what the tag stats
    page and its live totals count. Archived and stopped links included, as in the API's tag
    stats; 404 for a tag the workspace does not have."""
    workspace = current_workspace(request)
    try:
        found = tag_get(user=request.user, name=tag, workspace_id=workspace.pk)
    except TagNotFound:
        raise Http404("No such tag") from None
    links = link_list(
        user=request.user, tags=[found.name], archived=True, workspace_id=workspace.pk
    )
    return workspace, found, links


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def tag_stats(request: HttpRequest, tag: str) -> HttpResponse:
    """One of the current workspace's tags: the link stats page's cards summed over the links
    carrying it (a person who visited several counts once), and each link's own clicks. Tags
    belong to a workspace: staff too see only their current workspace's. Its owners and
    editors rename or delete the tag here (POST)."""
    workspace, found, tag_links = _tag_and_links(request, tag)
    rename_form = TagRenameForm(
        request.POST if request.method == "POST" else None, initial={"name": found.name}
    )
    pending_merge = None
    if request.method == "POST":
        done = _tag_change(request, workspace_id=workspace.pk, tag=found, form=rename_form)
        if isinstance(done, TagNameTaken):
            pending_merge = done
        elif done is not None:
            return done
    links = list(tag_links)
    link_ids = [link.pk for link in links]
    # "All time" starts when the first of them was made.
    first = min((link.created_at for link in links), default=None)
    context = _period_stats(request, link_ids=link_ids, first=first, kept=("rows",))
    time_range = context["time_range"]
    period = _period_query(context["form"], time_range)
    totals = selectors.links_totals(link_ids=link_ids, start=time_range.start, end=time_range.end)
    statuses = link_statuses(links)
    rows = [
        {
            "link": link,
            "stats_url": link_page_url("link_stats", link, **period),
            "status": statuses[link.pk],
            **totals[link.pk],
        }
        for link in links
    ]
    # The busiest first; newest first among equals (link_list's order, kept by a stable sort).
    rows.sort(key=lambda row: (-row["clicks"], -row["unique_visitors"], -row["bot_clicks"]))
    my_links_query = _my_links_query(found.name, archived=any(link.archived for link in links))
    return render(
        request,
        "analytics/tag_stats.html",
        {
            **context,
            "tag": found,
            "rows": rows,
            "my_links_query": my_links_query,
            "may_change_tag": can_write_current(request),
            "rename_form": rename_form,
            "pending_merge": pending_merge,
        },
        status=400 if rename_form.errors else 200,
    )


@login_required
@require_GET
def tag_live(request: HttpRequest, tag: str) -> JsonResponse:
    """The tag stats page's totals while it is open: the same links as the page (the current
    workspace's tag, archived and stopped links included), see _live_answer."""
    _, _, links = _tag_and_links(request, tag)
    # A subquery of the figures' one query, not a query of its own.
    return _live_answer(request, links.order_by().values("pk"))


def _csv_lines(rows: Iterable[tuple], zone: dt.tzinfo, zone_name: str) -> Iterator[str]:
    writer = csv.writer(LineEcho())
    # EXPORT_FIELDS order, the time twice: in the person's zone, then in UTC (for joining with
    # other data). Each header names its zone and each value carries its offset, so neither a
    # person nor a spreadsheet can take one for the other.
    yield writer.writerow([f"time ({zone_name})", "time (UTC)", *selectors.EXPORT_FIELDS[1:]])
    for row in rows:
        visit_time, *rest = row
        local = visit_time.astimezone(zone).isoformat(timespec="seconds")
        utc = visit_time.astimezone(dt.UTC).isoformat(timespec="seconds")
        # A referrer or User-Agent starting with "=" would run as a formula in a spreadsheet.
        yield writer.writerow([local, utc, *(spreadsheet_safe(value) for value in rest)])


@login_required
def link_visits_csv(request: HttpRequest, code: str) -> StreamingHttpResponse:
    """Every visit of the link as CSV, streamed in chunks: memory stays flat at a million rows."""
    link = visible_link_or_404(request, code)
    rows = selectors.visit_rows_for_export(link=link)
    # The zone is read now: the rows are written after TimeZoneMiddleware has deactivated it.
    zone, zone_name = timezone.get_current_timezone(), timezone.get_current_timezone_name()
    response = StreamingHttpResponse(
        _csv_lines(rows, zone, zone_name), content_type="text/csv; charset=utf-8"
    )
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="visits-{link.code}-{stamp}.csv"'
    response["Cache-Control"] = "private, no-store"
    return response


def _runway(hours: float) -> str:
    """How long the unused codes last at the current rate, in words."""
    if hours < 1:  # an empty pool is refilled inline by the next create (links.codes.pool)
        return "less than an hour; the next link made refills it"
    if hours < 48:
        return f"about {round(hours)} hours"
    return f"about {round(hours / 24)} days"


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    """Staff only: clicks across all links, the busiest links and tags, the newest links, the
    code pool."""
    if not request.user.is_staff:
        raise PermissionDenied("The overview is for staff.")
    form, time_range = _range_form(request, default="24h", first=selectors.first_moment())
    bucket = selectors.series_bucket(time_range.start, time_range.end)
    series = selectors.series(start=time_range.start, end=time_range.end, bucket=bucket)
    chart = chart_data(series, bucket)
    top = selectors.top_links(start=time_range.start, end=time_range.end, limit=10)
    tags = selectors.top_tags(start=time_range.start, end=time_range.end, limit=10)
    newest = list(link_list(user=request.user, owned_only=False, archived=True)[:10])
    pool_report = pool.pool_report()
    runway_hours = pool_report["pool_runway_hours"]
    return render(
        request,
        "analytics/overview.html",
        {
            "form": form,
            "time_range": time_range,
            "range_choices": StatsRangeForm.RANGE_CHOICES,
            "chart": chart,
            "total_clicks": sum(chart["clicks"]),
            "total_bots": sum(chart["bot_clicks"]),
            # Leads, sales and revenue of every link (issue #29), with their rates.
            "conversions": selectors.conversion_totals(
                link_ids=None,
                start=time_range.start,
                end=time_range.end,
                clicks=sum(chart["clicks"]),
            ),
            "top_links": top,
            "top_tags": tags,
            "newest_links": [
                {"link": link, "short_url": link_short_url(link, request=request)}
                for link in newest
            ],
            **pool_report,
            "pool_runway": _runway(runway_hours) if runway_hours is not None else None,
            "uses_redis": uses_redis(),
            "pipeline": selectors.pipeline_status(),
            "orphans": selectors.orphan_visit_summary(start=time_range.start, end=time_range.end),
            "live_start": _live_start(time_range),
        },
    )


@login_required
@require_GET
def overview_live(request: HttpRequest) -> JsonResponse:
    """The overview's totals while it is open (staff only, as the page), see _live_answer."""
    if not request.user.is_staff:
        raise PermissionDenied("The overview is for staff.")
    return _live_answer(request, None)
