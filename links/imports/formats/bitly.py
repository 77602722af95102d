"""Bitly: its CSV export and its API's link objects (GET /v4/groups/{guid}/bitlinks).

Columns are recognised under the API's field names (`id`, `link`, `long_url`, `title`,
`created_at`, `archived`, `tags`, `custom_bitlinks`) and under the dashboard export's spellings
(`Bitlink`, `Long URL`, `Title`, `Date Created`, `Custom Bitlinks`…), in any case and spacing.
The old code is the last path segment of the Bitlink (`bit.ly/3abcDEF` → `3abcDEF`); a link
with custom back-halves keeps its first one (`bit.ly/spring-sale`), the name people were given.
Links on Bitly's own hosts come to this service's default domain; a branded domain's host is
kept, so its links land on that domain here when it is one of ours.
"""

from __future__ import annotations

import re
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
    split_short_link,
    split_tags,
    text_of,
)

# Bitly's own short hosts: nobody else can serve them, so their links take the default domain.
BITLY_HOSTS = frozenset({"bit.ly", "bitly.com", "bitly.is", "j.mp"})

LINK_COLUMNS = ("bitlink", "link", "id")
LONG_URL_COLUMNS = ("longurl", "destinationurl", "destination", "originalurl")
CREATED_COLUMNS = ("createdat", "created", "datecreated", "createddate", "creationdate")
CUSTOM_COLUMNS = ("custombitlinks", "custombitlink", "custombackhalves", "custombackhalf")


def looks_like_bitly_header(keys: set[str]) -> bool:
    return bool(keys & set(LONG_URL_COLUMNS)) and bool(keys & set(LINK_COLUMNS))


def _custom_links(value) -> list[str]:
    if isinstance(value, list | tuple):
        return [text_of(item) for item in value if text_of(item)]
    return [item for item in re.split(r"[\s,|;]+", text_of(value)) if item]


def _row(number: int, fields: dict) -> SourceRow:
    """A SourceRow from one link's fields, {header_key(name): value} (CSV cells or JSON)."""

    bitlink = text_of(first_given(fields, LINK_COLUMNS))
    customs = _custom_links(first_given(fields, CUSTOM_COLUMNS))
    chosen = customs[0] if customs else bitlink
    host, code = split_short_link(chosen)
    notes = []
    if customs and bitlink:
        others = [split_short_link(link)[1] for link in [bitlink, *customs[1:]]]
        others = [other for other in others if other and other != code]
        if others:
            notes.append(
                f"Bitly also answered to {', '.join(others)}; the custom back-half “{code}” is "
                "the code kept."
            )
    return SourceRow(
        row=number,
        long_url=text_of(first_given(fields, LONG_URL_COLUMNS)),
        code=code,
        title=text_of(fields.get("title")),
        tags=split_tags(fields.get("tags")),
        created_at=parse_datetime(first_given(fields, CREATED_COLUMNS)),
        archived=bool(parse_bool(fields.get("archived"))),
        domain=None if host is None or host in BITLY_HOSTS else host,
        notes=notes,
    )


def parse_bitly_csv(text: str) -> ParsedFile:
    rows = (_row(record.line, record.cells) for record in read_records(text))
    return ParsedFile(format="bitly", unit="line", rows=rows)


# Where the list of links is (links.imports.formats.jsonstream): the API's answer or the bare list.
JSON_PATHS = frozenset({(), ("links",)})


def looks_like_bitly_json(data) -> bool:
    items = data.get("links") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return False
    keys = {header_key(key) for key in items[0]}
    return "longurl" in keys and bool(keys & {"link", "id"}) and "code" not in keys


def parse_bitly_json(items: Iterable[object]) -> ParsedFile:
    """The items of the list at one of JSON_PATHS (links.imports.formats.jsonstream)."""
    return item_rows(
        "bitly-json",
        items,
        lambda number, item: _row(number, {header_key(key): value for key, value in item.items()}),
    )
