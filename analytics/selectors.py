"""Reads for stats pages, the stats API and the admin.

Contract (other modules code against these signatures; the analytics pipeline fills them in):
every breakdown is a list of {"name": str, "clicks": int} sorted by clicks, descending.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

BREAKDOWN_FIELDS = {
    "countries": "country",
    "provinces": "province",
    "cities": "city",
    "isps": "isp",
    "browsers": "browser_type",
    "os": "os_type",
    "devices": "device_type",
    "referrers": "referrer_host",
}


def hourly_series(
    *, link_ids: Iterable[int] | None = None, start: datetime, end: datetime
) -> list[dict]:
    """[{hour, clicks, unique_visitors, bot_clicks}] for every hour in [start, end), zeros kept."""
    return []


def link_stats(*, link, start: datetime, end: datetime) -> dict:
    """Everything the stats API and the link stats page show for one link."""
    return {
        "code": link.code,
        "total_clicks": 0,
        "unique_visitors": 0,
        "bot_clicks": 0,
        "series": [],
        **{name: [] for name in BREAKDOWN_FIELDS},
    }


def link_totals(*, link_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """{link_id: {"clicks", "unique_visitors", "bot_clicks"}} for list pages, in one query."""
    return {}
