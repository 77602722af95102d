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
    """Each breakdown's rows with their share of the period (the selectors' `share`), and an
    "Other" row for the values past the limit, for the tables and their bars."""
    tables = []
    for key, title in BREAKDOWN_TITLES:
        rows = [
            # Empty values are named by the selectors.
            {"name": row["name"], "clicks": row["clicks"], "percent": row["share"]}
            for row in stats.get(key) or []
        ]
        other = stats.get("other", {}).get(key)
        if other and other["clicks"]:
            rows.append(
                {
                    "name": f"Other ({other['values']} more)",
                    "clicks": other["clicks"],
                    "percent": other["share"],
                    "is_other": True,
                }
            )
        tables.append(
            {"key": key, "title": title, "rows": rows, "has_other": bool(other and other["values"])}
        )
    return tables
