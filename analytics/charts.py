"""Charts and tables shaped from the stats selectors' output, for the pages and the admin."""

from __future__ import annotations

from django.utils import timezone

from analytics.selectors import UNKNOWN

BREAKDOWN_TITLES = [
    ("countries", "Countries"),
    ("provinces", "Provinces / regions"),
    ("cities", "Cities"),
    ("browsers", "Browsers"),
    ("os", "Operating systems"),
    ("devices", "Devices"),
    ("referrers", "Referrers"),
    ("channels", "How people came"),
    ("destinations", "Destinations (rules, app links, variants)"),
    ("fallbacks", "Sent to the fallback (link stopped)"),
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
        if key == "destinations" and not any(row["url"] for row in stats.get(key) or []):
            continue  # everyone went to the long URL: a link without rules, or none matched
        if key == "fallbacks" and not stats.get(key):
            continue  # nobody met the link stopped with a fallback
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


_PLACE_KEYS = {"countries", "provinces", "cities", "isps"}


def _short_title(title: str) -> str:
    """A table's title without its parenthesis, for lists of names ("Networks", "Bots & link
    previews")."""
    return title.split(" (")[0]


def breakdown_cards(tables: list[dict], *, networks_named: bool) -> dict:
    """Which of breakdown_tables' tables the stats page shows, and one line for the rest, instead
    of a card per table that says nothing (a new link had ten "No data in this period" cards):

    - `tables`: those with something known in them;
    - `empty`: short titles of those without a row ("No data yet: Bots & link previews, …");
    - `unknown`: short titles of those whose only row is "Unknown" (a place the GeoIP data
      does not know, say), apart from the networks table, which has its own note;
    - `networks_note`: why networks are not named, when that is worth a word: no network data is
      installed (`networks_named` False) and some people clicked, or the data named none of the
      period's networks;
    - `nothing`: no table has a row at all (one "No data yet" message stands for them all);
    - `places_shown`: a table of places or networks is shown (their data's credit goes with it).
    """
    shown, empty, unknown = [], [], []
    networks_unknown = False
    for table in tables:
        if not table["rows"]:
            empty.append(_short_title(table["title"]))
        elif all(row["name"] == UNKNOWN for row in table["rows"]):
            if table["key"] == "isps":
                networks_unknown = True
            else:
                unknown.append(_short_title(table["title"]))
        else:
            shown.append(table)
    people = any(table["key"] == "isps" and table["rows"] for table in tables)
    networks_note = ""
    if people and not networks_named:
        networks_note = "not-installed"
    elif networks_unknown:
        networks_note = "none-named"
    return {
        "tables": shown,
        "empty": empty,
        "unknown": unknown,
        "networks_note": networks_note,
        "nothing": not shown and not unknown and not networks_unknown,
        "places_shown": any(table["key"] in _PLACE_KEYS for table in shown),
    }
