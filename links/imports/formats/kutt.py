"""Kutt: its API's link objects as JSON, what GET /api/v2/links answers
(`{"data": [{"id", "address", "target", "description", "banned", "password", "visit_count",
"created_at", "updated_at", "link", "domain"?, "expire_in"?}], "total", "limit", "skip"}`), or
the bare list of them (several pages put together).

`address` is the old code, `target` the long URL, `description` the title. A banned link is not
imported, nor is a password-protected one: Kutt's API says only *that* it has a password, and
bringing it over without one would open it to everyone. A link's own `domain` is kept (a
self-hosted Kutt's extra domains); none, or kutt.it, is this service's default domain.
"""

from __future__ import annotations

from collections.abc import Iterable

from links.imports.formats.jsonstream import item_rows
from links.imports.formats.rows import ParsedFile, SourceRow, parse_bool, parse_datetime, text_of

KUTT_HOSTS = frozenset({"kutt.it"})
# Where the list of links is (links.imports.formats.jsonstream): the API's answer or the bare list.
JSON_PATHS = frozenset({(), ("data",)})


def _items(data) -> list | None:
    items = data.get("data") if isinstance(data, dict) else data
    return items if isinstance(items, list) else None


def looks_like_kutt(data) -> bool:
    items = _items(data)
    return bool(items) and isinstance(items[0], dict) and {"address", "target"} <= set(items[0])


def _domain(value) -> str | None:
    host = text_of(value).lower()
    if isinstance(value, dict):  # some versions nest it: {"address": "s.example.com", …}
        host = text_of(value.get("address")).lower()
    return host if host and host not in KUTT_HOSTS else None


def _kutt_row(number: int, item: dict) -> SourceRow:
    row = SourceRow(
        row=number,
        long_url=text_of(item.get("target")),
        code=text_of(item.get("address")) or None,
        title=text_of(item.get("description")),
        created_at=parse_datetime(item.get("created_at")),
        expires_at=parse_datetime(item.get("expire_in")),
        domain=_domain(item.get("domain")),
    )
    if parse_bool(item.get("banned")):
        row.skip_reason = "banned in Kutt"
    elif item.get("password") and parse_bool(item.get("password")) is not False:
        row.skip_reason = (
            "protected by a password in Kutt, which its export does not carry: imported "
            "without it, the link would be open to everyone"
        )
    return row


def parse_kutt(items: Iterable[object]) -> ParsedFile:
    """The items of the list at one of JSON_PATHS (links.imports.formats.jsonstream)."""
    return item_rows("kutt", items, _kutt_row)
