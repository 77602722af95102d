"""A plain CSV (`long_url, alias, title, tags`), which is also what this service's own CSV export
reads back as, and this service's JSON export.

Columns, any order, any case (only `long_url` is required): `long_url` (or `url`), `alias` (or
`code`: the old code), `title`, `tags` (separated by `|`, `;` or `,` inside the cell: `a|b`,
`a; b`, `"a, b"`), `created_at`, `valid_since` (its start), `expires_at`, `archived` (yes/no,
true/false, 1/0), `domain` (a host; empty for the default domain), `status` (a `revoked` link is
not imported), `og_title`, `og_description`, `og_image` (its social preview), `expired_url` (its
fallback once stopped), `ios_url`, `android_url` (its app deep links), `track_conversions`.
Other columns (`short_url`, `clicks`…) are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable

from links.imports.formats.csvfiles import read_records
from links.imports.formats.jsonstream import item_rows
from links.imports.formats.rows import (
    ParsedFile,
    SourceRow,
    first_given,
    header_key,
    parse_bool,
    parse_datetime,
    split_tags,
    text_of,
    without_formula_guard,
)

LONG_URL_COLUMNS = ("longurl", "url", "destination", "target")
CODE_COLUMNS = ("alias", "code", "shortcode", "keyword", "backhalf")


def looks_like_plain_header(keys: set[str]) -> bool:
    return bool(keys & set(LONG_URL_COLUMNS))


def _row(number: int, fields: dict, *, csv_cells: bool = False) -> SourceRow:
    """`csv_cells`: free text may carry the apostrophe a CSV export puts before a formula."""

    def free_text(value) -> str:
        text = text_of(value)
        return without_formula_guard(text) if csv_cells else text

    row = SourceRow(
        row=number,
        long_url=text_of(first_given(fields, LONG_URL_COLUMNS)),
        code=text_of(first_given(fields, CODE_COLUMNS)) or None,
        title=free_text(fields.get("title")),
        tags=split_tags(
            free_text(fields.get("tags")) if csv_cells else fields.get("tags"),
        ),
        created_at=parse_datetime(fields.get("createdat")),
        expires_at=parse_datetime(fields.get("expiresat")),
        valid_since=parse_datetime(fields.get("validsince")),
        archived=bool(parse_bool(fields.get("archived"))),
        domain=text_of(fields.get("domain")).lower() or None,
        og_title=free_text(fields.get("ogtitle")),
        og_description=free_text(fields.get("ogdescription")),
        og_image=text_of(fields.get("ogimage")),
        expired_url=text_of(fields.get("expiredurl")),
        ios_url=text_of(fields.get("iosurl")),
        android_url=text_of(fields.get("androidurl")),
        fallback_url=text_of(fields.get("fallbackurl")),
        track_conversions=bool(parse_bool(fields.get("trackconversions"))),
    )
    if text_of(fields.get("status")).lower() == "revoked":
        row.skip_reason = "revoked in the source"
    return row


def parse_plain_csv(text: str) -> ParsedFile:
    rows = (_row(record.line, record.cells, csv_cells=True) for record in read_records(text))
    return ParsedFile(format="plain", unit="line", rows=rows)


# Where the list of links is (links.imports.formats.jsonstream).
JSON_PATHS = frozenset({("links",)})


def _items(data) -> list | None:
    items = data.get("links") if isinstance(data, dict) else None
    return items if isinstance(items, list) else None


def looks_like_shorturl_json(data) -> bool:
    items = _items(data)
    return bool(items) and isinstance(items[0], dict) and {"code", "long_url"} <= set(items[0])


def parse_shorturl_json(items: Iterable[object]) -> ParsedFile:
    """The items of the list at JSON_PATHS (links.imports.formats.jsonstream)."""
    return item_rows(
        "shorturl-json",
        items,
        lambda number, item: _row(number, {header_key(key): value for key, value in item.items()}),
    )
