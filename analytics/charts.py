"""Charts and tables shaped from the stats selectors' output, for the pages and the admin."""

from __future__ import annotations

from django.utils import timezone

from .forms import TimeRange

# Above this many days the chart shows days instead of hours (a year of hours is unreadable).
HOURLY_CHART_MAX_DAYS = 31

BREAKDOWN_TITLES = [
    ("countries", "Countries"),
    ("provinces", "Provinces / regions"),
    ("cities", "Cities"),
    ("browsers", "Browsers"),
    ("os", "Operating systems"),
    ("devices", "Devices"),
    ("referrers", "Referrers"),
    ("isps", "Networks (ISP)"),
    ("bots", "Bots & link previews (not counted as clicks)"),
    ("bot_kinds", "Bots by kind"),
]


def chart_data(series: list[dict], time_range: TimeRange) -> dict:
    """Labels and values for Chart.js, in local time; whole days for long ranges."""
    by_day = time_range.days > HOURLY_CHART_MAX_DAYS
    points: dict[str, list[int]] = {}
    for row in series:
        moment = timezone.localtime(row["hour"])
        # %M too: in zones such as Asia/Kolkata a UTC hour starts at half past.
        label = f"{moment:%Y-%m-%d}" if by_day else f"{moment:%Y-%m-%d %H:%M}"
        values = points.setdefault(label, [0, 0, 0])
        values[0] += row["clicks"]
        values[1] += row["unique_visitors"]
        values[2] += row["bot_clicks"]
    return {
        "unit": "day" if by_day else "hour",
        "labels": list(points),
        "clicks": [v[0] for v in points.values()],
        "unique_visitors": [v[1] for v in points.values()],
        "bot_clicks": [v[2] for v in points.values()],
    }


def breakdown_tables(stats: dict) -> list[dict]:
    """Each breakdown with a share per row, for the tables and their bars."""
    tables = []
    for key, title in BREAKDOWN_TITLES:
        rows = stats.get(key) or []
        total = sum(row["clicks"] for row in rows) or 1
        tables.append(
            {
                "key": key,
                "title": title,
                "rows": [
                    {
                        "name": row["name"],  # empty values are named by the selectors
                        "clicks": row["clicks"],
                        "percent": round(100 * row["clicks"] / total, 1),
                    }
                    for row in rows
                ],
            }
        )
    return tables
