"""The click panel on a link's admin page. A template tag, so that the links app's admin shows
analytics without links' code importing analytics (its template loads this library)."""

from __future__ import annotations

from django import template

from analytics import selectors
from analytics.charts import chart_data
from analytics.forms import StatsRangeForm

register = template.Library()


@register.inclusion_tag("admin/analytics/link_click_panel.html")
def link_click_panel(link) -> dict:
    """The last 7 days of clicks as a chart with its bots by kind, and the latest visits."""
    week = StatsRangeForm(default="7d").time_range()
    bucket = selectors.series_bucket(week.start, week.end)
    series = selectors.series(link_ids=[link.pk], start=week.start, end=week.end, bucket=bucket)
    chart = chart_data(series, bucket)
    return {
        "chart": chart,
        "week_clicks": sum(chart["clicks"]),
        "week_bots": sum(chart["bot_clicks"]),
        "bot_kinds": selectors.breakdowns(link_ids=[link.pk], start=week.start, end=week.end)[
            "bot_kinds"
        ],
        "latest_visits": selectors.latest_visits(link=link, limit=20),
    }
