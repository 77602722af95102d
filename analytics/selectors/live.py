"""Live figures: a stats page's totals while they move, read about once a second by each open
link, tag or overview page and by GET /api/v1/links/{code}/stats/live.

The flush stores a click's visit within about a second (EMBEDDED_FLUSH_SECONDS, or
NODE_SYNC_SECONDS + ANALYTICS_FLUSH_SECONDS), but the roll-up rewrites its HourlyClick row only
every 5–10 s. So the hours the roll-up has long finished are read from HourlyClick, and the
newest ones (from the hour that was current SETTLE ago) are counted from the visits themselves:
one UNION ALL query of both sums, on indexed columns ((link, hour) and the covering
(link, visit_time, id, is_bot, client_id)), which reads at most ~65 minutes of one link's
visits. Once the roll-up has caught up, the figures are the stats' own totals of the same range,
hour by hour; before that they run ahead of them. The one way they go down: visits of an hour
older than SETTLE stored late (after an outage) count only once the roll-up has them, so an
hour switching over to HourlyClick before that can lower the figure for a few seconds (the
pages keep the largest they saw; docs/api.md tells API clients).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Q, Sum, Value
from django.utils import timezone

from analytics.models import utc_hour
from analytics.selectors.hours import LinkIds, _hour_ceil, _hourly_rows, _visits

# How long after an hour ends its HourlyClick row is trusted over its visits: the roll-up runs
# every 5 s (embedded) or 10 s (beat), so minutes is plenty, and an hour that just ended is still
# counted from its visits when a late flush adds to it.
SETTLE = timedelta(minutes=5)


def live_totals(
    *, link_ids: LinkIds, start: datetime, end: datetime | None = None
) -> dict[str, int | datetime]:
    """{"clicks", "bot_clicks", "as_of"} of `link_ids` (None: every link) in [start, end),
    `end` None: up to now. `start` is rounded down to its hour and `end` up, as the stats pages
    count. One query. A counter added later (conversions…) goes beside "clicks"."""
    now = timezone.now()
    start = utc_hour(start)
    end = _hour_ceil(end) if end is not None else utc_hour(now) + timedelta(hours=1)
    split = min(max(utc_hour(now - SETTLE), start), end)
    # Grouped by a constant: no GROUP BY, one row of sums from each half.
    rolled = (
        _hourly_rows(link_ids, start, split)
        .annotate(part=Value(0))
        .values("part")
        .annotate(clicks=Sum("clicks"), bots=Sum("bot_clicks"))
        .values_list("clicks", "bots")
    )
    fresh = (
        _visits(link_ids, split, end)
        .annotate(part=Value(1))
        .values("part")
        .annotate(
            clicks=Count("id", filter=Q(is_bot=False)), bots=Count("id", filter=Q(is_bot=True))
        )
        .values_list("clicks", "bots")
    )
    clicks = bots = 0
    for part_clicks, part_bots in rolled.order_by().union(fresh.order_by(), all=True):
        clicks += part_clicks or 0
        bots += part_bots or 0
    return {"clicks": clicks, "bot_clicks": bots, "as_of": now}
