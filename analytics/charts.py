"""Charts and tables shaped from the stats selectors' output, for the pages and the admin."""

from __future__ import annotations

from django.utils import timezone

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


def chart_data(series: list[dict], bucket: str = "hour") -> dict:
    """Labels and values for Chart.js, in local time, one point per entry of `series` (one
    bucket each, see selectors.series), with each bucket's distinct people."""
    labels = []
    for row in series:
        moment = timezone.localtime(row["hour"])
        # %M too: in zones such as Asia/Kolkata a UTC hour starts at half past.
        labels.append(f"{moment:%Y-%m-%d %H:%M}" if bucket == "hour" else f"{moment:%Y-%m-%d}")
    return {
        "unit": bucket,
        "labels": labels,
        "clicks": [row["clicks"] for row in series],
        "unique_visitors": [row["unique_visitors"] for row in series],
        "bot_clicks": [row["bot_clicks"] for row in series],
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
