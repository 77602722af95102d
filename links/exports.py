"""Writing the export's records (links.selectors.link_export_rows) as CSV or JSON, streamed: one
record at a time, whatever the number of links.

Both read back with `manage.py import_links` (the CSV as a plain CSV, the JSON as this service's
JSON export), codes, titles, tags, domains, creation dates and archived flags kept.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterable
from typing import TextIO

from django.utils import timezone

from .shortlinks import short_url_for

EXPORT_FORMATS = ("csv", "json")
EXPORT_FIELDS = [
    "code",
    "short_url",
    "long_url",
    "title",
    "tags",
    "domain",
    "created_at",
    "expires_at",
    "status",
    "archived",
    "clicks",
    "unique_visitors",
]


def _moment(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat() if value is not None else None


def _plain(record: dict) -> dict:
    """The record with datetimes as ISO 8601 in UTC."""
    return {
        key: _moment(value) if isinstance(value, dt.datetime) else value
        for key, value in record.items()
    }


def write_links_csv(records: Iterable[dict], out: TextIO) -> int:
    """The records as CSV with a header row (tags joined with ", ", as the forms show them;
    `owner` added as the last column when the records carry it). Returns how many."""
    writer = None
    count = 0
    for record in records:
        if writer is None:
            fields = EXPORT_FIELDS + (["owner"] if "owner" in record else [])
            writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
        row = _plain(record)
        row["tags"] = ", ".join(record["tags"])
        row["archived"] = "true" if record["archived"] else "false"
        row["expires_at"] = row["expires_at"] or ""
        writer.writerow(row)
        count += 1
    if writer is None:
        csv.writer(out, lineterminator="\n").writerow(EXPORT_FIELDS)
    return count


def write_links_json(records: Iterable[dict], out: TextIO) -> int:
    """The records as `{"exported_at": …, "links": [{…}, …]}`, one link per line. Returns how
    many."""
    out.write(json.dumps({"exported_at": _moment(timezone.now())})[:-1] + ', "links": [')
    count = 0
    for record in records:
        out.write(",\n" if count else "\n")
        out.write(json.dumps(_plain(record), ensure_ascii=False))
        count += 1
    out.write("\n]}\n")
    return count


def write_import_report_csv(report, out: TextIO) -> None:
    """An import's report (links.services.imports.ImportReport), one row per row of the file:
    where it was (`line` or `item`), outcome (`imported`, `new code`, `skipped`), old code, code
    and short URL here, long URL, and why."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([report.unit, "outcome", "old_code", "code", "short_url", "long_url", "reason"])
    for entry in report.entries:
        short_url = short_url_for(entry.code, domain_host=entry.domain) if entry.code else ""
        writer.writerow(
            [
                entry.row,
                entry.outcome,
                entry.old_code,
                entry.code,
                short_url,
                entry.long_url,
                entry.reason,
            ]
        )
