"""Shlink: its API's short URL objects as JSON, and the web client's CSV export.

JSON: what GET /rest/v3/short-urls answers (`{"shortUrls": {"data": [{"shortCode", "shortUrl",
"longUrl", "dateCreated", "visitsSummary", "tags", "meta": {"validSince", "validUntil",
"maxVisits"}, "domain", "title", "crawlable", "forwardQuery"}], "pagination": {…}}}`), or the bare
list. `domain` is null for Shlink's default domain (this service's default here) and a host
otherwise. `meta.validSince` becomes the start, `meta.validUntil` the expiry, `meta.maxVisits`
the visit cap (counted afresh here), `forwardQuery` whether a visitor's query string is passed
on.

CSV (shlink-web-client's "Export" button): `createdAt, domain, shortCode, shortUrl, longUrl,
title, tags, visits`, tags joined with `|`. Its `domain` is always a host, the default domain's
too, so every row lands on that domain here: make it this service's (SHORT_URL_BASE), add it
(`manage.py domains add`), or choose one with --domain.
"""

from __future__ import annotations

from collections.abc import Iterable

from links.imports.formats.csvfiles import pick, read_records
from links.imports.formats.jsonstream import item_rows
from links.imports.formats.rows import (
    ParsedFile,
    SourceRow,
    parse_bool,
    parse_datetime,
    split_short_link,
    split_tags,
    text_of,
)

# Where the list of short URLs is (links.imports.formats.jsonstream): the API's answer, its
# `shortUrls` alone, or the bare list.
JSON_PATHS = frozenset({(), ("shortUrls",), ("shortUrls", "data"), ("data",)})


def _items(data) -> list | None:
    if isinstance(data, dict):
        data = data.get("shortUrls", data)
        if isinstance(data, dict):
            data = data.get("data")
    return data if isinstance(data, list) else None


def looks_like_shlink(data) -> bool:
    items = _items(data)
    return bool(items) and isinstance(items[0], dict) and {"shortCode", "longUrl"} <= set(items[0])


def looks_like_shlink_header(keys: set[str]) -> bool:
    return {"shortcode", "longurl"} <= keys


def _max_visits(value) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
        return None
    return number if number > 0 else None


def _shlink_row(number: int, item: dict) -> SourceRow:
    meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
    forward = parse_bool(item.get("forwardQuery"))
    row = SourceRow(
        row=number,
        long_url=text_of(item.get("longUrl")),
        code=text_of(item.get("shortCode")) or None,
        title=text_of(item.get("title")),
        tags=split_tags(item.get("tags")),
        created_at=parse_datetime(item.get("dateCreated")),
        domain=text_of(item.get("domain")).lower() or None,
        expires_at=parse_datetime(meta.get("validUntil")),
        valid_since=parse_datetime(meta.get("validSince")),
        max_visits=_max_visits(meta.get("maxVisits")),
        pass_query=forward,
    )
    return row


def parse_shlink(items: Iterable[object]) -> ParsedFile:
    """The items of the list at one of JSON_PATHS (links.imports.formats.jsonstream)."""
    return item_rows("shlink", items, _shlink_row)


def _csv_row(line: int, cells: dict[str, str]) -> SourceRow:
    host = cells.get("domain") or split_short_link(cells.get("shorturl", ""))[0]
    return SourceRow(
        row=line,
        long_url=pick(cells, "longurl"),
        code=pick(cells, "shortcode") or None,
        title=pick(cells, "title"),
        tags=split_tags(pick(cells, "tags")),
        created_at=parse_datetime(pick(cells, "createdat", "datecreated")),
        domain=(host or "").lower() or None,
    )


def parse_shlink_csv(text: str) -> ParsedFile:
    rows = (_csv_row(record.line, record.cells) for record in read_records(text))
    return ParsedFile(format="shlink-csv", unit="line", rows=rows)
