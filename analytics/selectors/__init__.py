"""Reads for stats pages, the stats API and the admin.

Contract (other modules code against these signatures; the analytics pipeline fills them in):
every breakdown is a list of {"name": str, "clicks": int} sorted by clicks, descending.

Series and totals read HourlyClick (one row per link and hour), never raw visits. Breakdowns read
the roll-up rows kept with it (DailyBreakdown for whole UTC days, HourlyBreakdown for the hours
of partial days), and distinct people over a range read HourlyClick.last_visitors (see
LinkVisitor), so a link's stats cost the same at a thousand visits as at a million; only a range
that ends before some of its visitors' latest visits counts them from VisitRecord. Breakdowns
count people only; bots and link-preview fetchers are counted apart (`bot_clicks`, `bots`).
Hours are UTC hours shown in the current time zone (settings.TIME_ZONE unless activated
otherwise), as aware datetimes.

One module per question a caller asks; callers import the names from here
(`from analytics import selectors`):

- `totals`: how many (`links_totals`, `link_stats` / `links_stats` / `workspace_stats`,
  `tags_totals`, `top_links`, `top_tags`);
- `series`: clicks over time (`series`, `hourly_series`, `series_bucket`);
- `breakdowns`: what they were made of (`breakdowns`, `variant_results`, `referrer_host`);
- `visits`: visits one by one (`latest_visits`, `visit_list`, `visit_rows_for_export`,
  `visitor_visits`, `visitor_visits_export`, `visitor_visits_csv_chunks`) and
  `pipeline_status`;
- `live`: a stats page's totals while they move (`live_totals`), read every second;
- `orphan_visits`: requests that reached no link;
- `conversions`: leads, sales and revenue (`conversion_totals`, `conversion_details`);
- `hours`: the whole hours of a range and their rows, shared by the first three.

A module may import a sibling, in that order of dependence (totals → series, breakdowns,
conversions; conversions → breakdowns → hours; live → hours), never this package.
"""

from analytics.selectors.breakdowns import (
    BOT_BREAKDOWN_FIELDS,
    BREAKDOWN_FIELDS,
    DEFAULT_LIMIT,
    DIRECT,
    FALLBACK_LABELS,
    LONG_URL,
    ROLLED_UP_DIMENSIONS,
    SET_ONLY_DIMENSIONS,
    UNKNOWN,
    breakdowns,
    referrer_host,
    share,
    variant_results,
)
from analytics.selectors.conversions import conversion_details, conversion_totals
from analytics.selectors.live import live_totals
from analytics.selectors.orphan_visits import (
    orphan_visit_slice,
    orphan_visit_summary,
    orphan_visit_total,
    orphan_visits_visible,
)
from analytics.selectors.series import BUCKETS, hourly_series, series, series_bucket
from analytics.selectors.totals import (
    first_moment,
    link_stats,
    link_uniques_exact_within,
    links_stats,
    links_totals,
    tags_totals,
    top_links,
    top_tags,
    workspace_stats,
)
from analytics.selectors.visits import (
    EXPORT_FIELDS,
    VISITOR_EXPORT_COLUMNS,
    has_visits,
    latest_visits,
    pipeline_status,
    visit_list,
    visit_rows_for_export,
    visitor_visits,
    visitor_visits_csv_chunks,
    visitor_visits_export,
)

__all__ = [
    "BOT_BREAKDOWN_FIELDS",
    "BREAKDOWN_FIELDS",
    "BUCKETS",
    "DEFAULT_LIMIT",
    "DIRECT",
    "EXPORT_FIELDS",
    "FALLBACK_LABELS",
    "LONG_URL",
    "ROLLED_UP_DIMENSIONS",
    "SET_ONLY_DIMENSIONS",
    "UNKNOWN",
    "VISITOR_EXPORT_COLUMNS",
    "breakdowns",
    "conversion_details",
    "conversion_totals",
    "first_moment",
    "has_visits",
    "hourly_series",
    "latest_visits",
    "link_stats",
    "link_uniques_exact_within",
    "links_stats",
    "links_totals",
    "live_totals",
    "orphan_visit_slice",
    "orphan_visit_summary",
    "orphan_visit_total",
    "orphan_visits_visible",
    "pipeline_status",
    "referrer_host",
    "series",
    "series_bucket",
    "share",
    "tags_totals",
    "top_links",
    "top_tags",
    "variant_results",
    "visit_list",
    "visit_rows_for_export",
    "visitor_visits",
    "visitor_visits_csv_chunks",
    "visitor_visits_export",
    "workspace_stats",
]
