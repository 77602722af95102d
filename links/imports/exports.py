"""Writing the export's records (links.selectors.link_export_rows) as CSV or JSON, and an
import's report as CSV: streamed one record at a time (chunks for a streaming response, or
written to a file), whatever the number of links.

Both exports read back with `manage.py import_links` (the CSV as a plain CSV, the JSON as this
service's JSON export), codes, titles, tags, domains, creation dates, starts, expiries, archived
flags and social previews kept. Free text in a CSV cell (titles, tags, preview texts, a report's
URLs and reasons) that a spreadsheet would run as a formula starts with an apostrophe; the plain
CSV importer takes it off again.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterable, Iterator
from typing import TextIO

from django.http import HttpRequest
from django.utils import timezone

from core.csv_cells import LineEcho, spreadsheet_safe
from links.shortlinks import short_url_for

EXPORT_FORMATS = ("csv", "json")
EXPORT_FIELDS = [
    "code",
    "short_url",
    "long_url",
    "title",
    "tags",
    "domain",
    "created_at",
    "valid_since",
    "expires_at",
    "status",
    "archived",
    "clicks",
    "unique_visitors",
    "og_title",
    "og_description",
    "og_image",
    "expired_url",  # the fallback (issue #28); "" for none
    "ios_url",  # app deep links (issue #28); "" for none
    "android_url",
    "fallback_url",  # failover while the destination is broken (issue #29); "" for none
    "health",  # the destination health checker's status: ok, broken or unknown
    "track_conversions",  # issue #29: "true" / "false"
]


def _moment(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat() if value is not None else None


def _plain(record: dict) -> dict:
    """The record with datetimes as ISO 8601 in UTC."""
    return {
        key: _moment(value) if isinstance(value, dt.datetime) else value
        for key, value in record.items()
    }


def links_csv_chunks(records: Iterable[dict]) -> Iterator[str]:
    """The records as CSV lines under a header row (tags joined with ", ", as the forms show
    them; `owner` added as the last column when the records carry it)."""
    writer = None
    for record in records:
        if writer is None:
            fields = EXPORT_FIELDS + (["owner"] if "owner" in record else [])
            writer = csv.DictWriter(LineEcho(), fieldnames=fields, lineterminator="\n")
            yield writer.writeheader()
        row = _plain(record)
        row["title"] = spreadsheet_safe(record["title"])
        row["og_title"] = spreadsheet_safe(record["og_title"])
        row["og_description"] = spreadsheet_safe(record["og_description"])
        row["tags"] = spreadsheet_safe(", ".join(record["tags"]))
        row["archived"] = "true" if record["archived"] else "false"
        row["track_conversions"] = "true" if record["track_conversions"] else "false"
        row["valid_since"] = row["valid_since"] or ""
        row["expires_at"] = row["expires_at"] or ""
        yield writer.writerow(row)
    if writer is None:
        yield csv.writer(LineEcho(), lineterminator="\n").writerow(EXPORT_FIELDS)


def links_json_chunks(records: Iterable[dict]) -> Iterator[str]:
    """The records as `{"exported_at": …, "links": [{…}, …]}`, one link per line."""
    yield json.dumps({"exported_at": _moment(timezone.now())})[:-1] + ', "links": ['
    for count, record in enumerate(records):
        yield (",\n" if count else "\n") + json.dumps(_plain(record), ensure_ascii=False)
    yield "\n]}\n"


class _Counted:
    def __init__(self, records: Iterable[dict]):
        self.records = records
        self.count = 0

    def __iter__(self) -> Iterator[dict]:
        for record in self.records:
            self.count += 1
            yield record


def write_links_csv(records: Iterable[dict], out: TextIO) -> int:
    """links_csv_chunks written to `out`; returns how many links."""
    counted = _Counted(records)
    for chunk in links_csv_chunks(counted):
        out.write(chunk)
    return counted.count


def write_links_json(records: Iterable[dict], out: TextIO) -> int:
    """links_json_chunks written to `out`; returns how many links."""
    counted = _Counted(records)
    for chunk in links_json_chunks(counted):
        out.write(chunk)
    return counted.count


def import_report_csv_chunks(
    report, *, request: HttpRequest | None = None, base: str = ""
) -> Iterator[str]:
    """An import's report (links.imports.report.ImportReport), one row per row of the file:
    where it was (`line` or `item`), outcome (`imported`, `new code`, `skipped`), old code, code
    and short URL here (links.shortlinks.short_url_for's, as the export's: on `base`, else
    SHORT_URL_BASE, else the page's `request` host), long URL, and why."""
    writer = csv.writer(LineEcho(), lineterminator="\n")
    yield writer.writerow(
        [report.unit, "outcome", "old_code", "code", "short_url", "long_url", "reason"]
    )
    for entry in report.entries:
        short_url = (
            short_url_for(entry.code, request=request, domain_host=entry.domain, base=base)
            if entry.code
            else ""
        )
        yield writer.writerow(
            [
                entry.row,
                entry.outcome,
                spreadsheet_safe(entry.old_code),
                entry.code,
                short_url,
                spreadsheet_safe(entry.long_url),
                spreadsheet_safe(entry.reason),
            ]
        )


def write_import_report_csv(report, out: TextIO, *, base: str = "") -> None:
    """The report as CSV into `out` (manage.py import_links --report), its short URLs on `base`
    (else SHORT_URL_BASE's)."""
    for chunk in import_report_csv_chunks(report, base=base):
        out.write(chunk)
