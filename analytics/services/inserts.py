"""VisitRecord rows written: a batch of decoded visits becomes one INSERT (or a few), an event id
already stored is skipped, a deleted link's visits are dropped, and the stored clicks are told to
analytics.events after the commit. Rows are prepared in the adapter's types and, on
MySQL/MariaDB, written as multi-row statements escaped by the driver itself (the measurements
are with _insert_visits and _mysql_values).

Who calls it, when, and what happens when a batch fails is analytics.services.ingest's.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction

from analytics import enrich, events, privacy
from analytics.models import VisitRecord, utc_hour
from analytics.services.privacy import link_privacy_modes, visitor_secret
from core import channels
from core.db import retry_on_conflict

# Rows per INSERT: 1,000 measured ~35 % faster than 500 on MariaDB; at most ~1.6 MB a statement.
_INSERT_BATCH = 1000
# MySQL/MariaDB: bytes of VALUES per INSERT (~2,000 visits). Far below the smallest default
# max_allowed_packet of the supported servers (16 MB on MariaDB, 64 MB on MySQL 8).
_MAX_STATEMENT_BYTES = 1 << 20
# The escaped SQL text of a visitor's values (see _VisitRow) is kept for up to _FRAGMENTS_MAX
# visitors (~15-20 MB), per thread, for the connection that escaped it (web threads store visits
# directly while Redis is down, each on its own connection).
_FRAGMENTS_MAX = 32768
_escaped = threading.local()


class _VisitRow(NamedTuple):
    """One VisitRecord row as the INSERT takes it: values already in the database adapter's
    types, so no model instance and no per-field preparation is made per visit (together those
    were ~40 % of a flush). A test keeps the fields in step with the model's columns."""

    link_id: int
    code: str
    event_id: str
    visit_time: str  # connection.ops.adapt_datetimefield_value() of the aware UTC datetime
    referrer: str
    channel: str  # one of core.channels.CHANNELS (messages.decode_visit sees to it)
    destination: str  # "" for the long URL (messages.decode_visit: absent in older messages)
    link_state: str  # "" served by the link; else the state whose fallback it was sent to
    # From here on the values depend only on the visitor (address, User-Agent): _VISITOR_FIELDS.
    user_agent: str
    client_id: str
    client_ip: str
    country: str
    country_code: str
    province: str
    city: str
    isp: str
    browser_type: str
    browser_version: str
    os_type: str
    os_version: str
    device_type: str
    is_bot: bool
    bot_name: str
    bot_kind: str


_VISITOR_FIELDS = _VisitRow._fields.index("user_agent")


def _visit_row(
    visit: dict,
    link_mode: str,
    enrichers: dict[tuple[str, str], Callable[[str, str], tuple]],
    adapt_time: Callable[[datetime], str],
) -> _VisitRow:
    """`link_mode` is the privacy mode of the visit's link; `enrichers` the batch's
    enrich.enricher()s by (mode, visitor-key window secret), made here on first use (a batch has
    one or two of each); `adapt_time` the connection's datetime adapter. A decoded message's
    fields are str/int already (messages.decode_visit), which is what CharField and ForeignKey
    would hand the adapter anyway; only the datetime needs work."""
    mode = privacy.visit_mode(visit, link_mode)
    secret = visitor_secret(visit["visit_time"]) if privacy.uses_windows(mode) else ""
    enriched = enrichers.get((mode, secret))
    if enriched is None:
        enriched = enrichers[mode, secret] = enrich.enricher(mode, secret)
    # Stored without its details (Sec-GPC, DNT): no referrer, and its User-Agent is read for
    # bots by the enricher, never stored. The webhooks' click is made from this row too.
    untracked = mode == enrich.PRIVATE
    return _VisitRow(
        visit["link_id"],
        visit["code"],
        visit["event_id"],
        adapt_time(visit["visit_time"]),
        "" if untracked else visit["referrer"],
        visit["channel"],
        visit["destination"],
        visit["link_state"],
        "" if untracked else visit["user_agent"],
        *enriched(visit["client_ip"], visit["user_agent"]),
    )


def _time_adapter() -> Callable[[datetime], str]:
    """The connection's datetime adapter, or its result computed directly where that is the
    same text: MySQL/MariaDB keeping UTC take `str()` of the naive UTC time, which Django's
    adapter reaches only after its generic checks (~3 µs a visit, ~5 % of a flush)."""
    adapt = connection.ops.adapt_datetimefield_value
    if connection.vendor != "mysql" or not settings.USE_TZ or connection.timezone_name != "UTC":
        return adapt

    def adapt_utc(value: datetime) -> str:
        if value.tzinfo is UTC:
            return str(value.replace(tzinfo=None))
        return adapt(value)

    return adapt_utc


def _insert_visits(rows: list[_VisitRow]) -> None:
    """INSERT prepared rows: multi-row statements written here on MySQL/MariaDB, one
    executemany elsewhere (not bulk_create, whose per-batch statement compiling measured 2.3x
    slower on SQLite)."""
    if not rows:
        return
    columns = [VisitRecord._meta.get_field(name).column for name in _VisitRow._fields]
    quote = connection.ops.quote_name
    # Only the model's own table and column names go into the text; values are parameters, or
    # on MySQL literals escaped by the driver itself (_mysql_values).
    head = "INSERT INTO {} ({}) VALUES ".format(  # noqa: S608
        quote(VisitRecord._meta.db_table), ", ".join(quote(column) for column in columns)
    )
    with connection.cursor() as cursor:
        if connection.vendor == "mysql":
            for values in _mysql_values(rows):
                cursor.execute(head + values)
            return
        sql = head + "({})".format(", ".join(["%s"] * len(columns)))
        for start in range(0, len(rows), _INSERT_BATCH):
            cursor.executemany(sql, rows[start : start + _INSERT_BATCH])


# Event ids are hex, and visit times our own digits and separators: such text is quoted as it
# is, which is what the driver's escaping would give (two of its calls a visit saved, ~2 µs);
# anything else is escaped by the driver.
_TIME_CHARACTERS = frozenset("0123456789-: .")
# The channels are our own plain words: quoted as they are.
_CHANNEL_LITERALS = {channel: b"'%s'" % channel.encode() for channel in channels.CHANNELS}


def _event_id_literal(event_id: str, literal: Callable[[str], bytes]) -> bytes:
    if event_id.isascii() and event_id.isalnum():
        return b"'%s'" % event_id.encode()
    return literal(event_id)


def _time_literal(text: str, literal: Callable[[str], bytes]) -> bytes:
    if _TIME_CHARACTERS.issuperset(text):
        return b"'%s'" % text.encode()
    return literal(text)


def _mysql_values(rows: list[_VisitRow]) -> Iterator[str]:
    """The VALUES lists of multi-row INSERTs of at most _MAX_STATEMENT_BYTES each.

    mysqlclient's executemany does the same, but cuts statements at 64 KB (~120 visits), and
    escapes each value of every row in Python. Bigger statements measured up to 1.3x
    faster on the server; the visitor's 14 values (User-Agent and what enrich derives from it and
    the address) are escaped once per visitor and reused, since most visits are repeat visitors.
    The escaping is the driver's own (mysql_real_escape_string: connection charset, sql_mode).
    """
    raw = connection.connection
    literal = raw.literal
    fragments = getattr(_escaped, "fragments", None)
    if fragments is None or _escaped.owner is not raw or len(fragments) > _FRAGMENTS_MAX:
        # Escaping depends on the connection (charset, NO_BACKSLASH_ESCAPES): a new one, or a
        # full cache, starts afresh.
        fragments = _escaped.fragments = {}
        _escaped.owner = raw
    codes: dict[str, bytes] = {}  # a batch has a few hundred links and referrers at most
    referrers: dict[str, bytes] = {}
    parts: list[bytes] = []
    size = 0
    for row in rows:
        visitor = row[_VISITOR_FIELDS:]
        fragment = fragments.get(visitor)
        if fragment is None:
            fragment = fragments[visitor] = b",".join(map(literal, visitor))
        code = codes.get(row.code)
        if code is None:
            code = codes[row.code] = literal(row.code)
        referrer = referrers.get(row.referrer)
        if referrer is None:
            referrer = referrers[row.referrer] = literal(row.referrer)
        channel = _CHANNEL_LITERALS.get(row.channel) or literal(row.channel)
        destination = b"''" if not row.destination else literal(row.destination)
        link_state = b"''" if not row.link_state else literal(row.link_state)
        part = b"(%d,%s,%s,%s,%s,%s,%s,%s,%s)" % (
            row.link_id,
            code,
            _event_id_literal(row.event_id, literal),
            _time_literal(row.visit_time, literal),
            referrer,
            channel,
            destination,
            link_state,
            fragment,
        )
        if parts and size + len(part) > _MAX_STATEMENT_BYTES:
            yield b",".join(parts).decode()
            parts, size = [], 0
        parts.append(part)
        size += len(part) + 1
    if parts:
        yield b",".join(parts).decode()


@retry_on_conflict
def _store(visits: list[dict]) -> tuple[int, set[tuple[int, datetime]]]:
    """Insert the visits not stored yet; returns (new rows, touched (link id, hour) pairs).

    Visits whose link has been deleted meanwhile are dropped; an event id already present (a
    batch taken again after a crash) is skipped, which makes re-delivery harmless.
    """
    by_event = {visit["event_id"]: visit for visit in visits}
    # The links that still exist, with the privacy mode their workspace stores visits under.
    modes = link_privacy_modes(v["link_id"] for v in by_event.values())
    live = modes.keys()
    wanted = [visit for visit in by_event.values() if visit["link_id"] in live]
    if not wanted:
        return 0, set()
    # Plain SQL: the ORM's per-parameter preparation of 1,000 event ids measured ~3 µs a visit;
    # on MySQL the ids are quoted here like the INSERT's (the driver's per-value escaping ~1.5 µs).
    quote = connection.ops.quote_name
    head = "SELECT {column} FROM {table} WHERE {column} IN ".format(  # noqa: S608
        column=quote(VisitRecord._meta.get_field("event_id").column),
        table=quote(VisitRecord._meta.db_table),
    )
    event_ids = [visit["event_id"] for visit in wanted]
    with connection.cursor() as cursor:
        if connection.vendor == "mysql":
            literal = connection.connection.literal
            ids = b",".join(_event_id_literal(event_id, literal) for event_id in event_ids)
            cursor.execute(head + "(" + ids.decode() + ")")
        else:
            cursor.execute(head + "({})".format(", ".join(["%s"] * len(event_ids))), event_ids)
        present = {event_id for (event_id,) in cursor.fetchall()}
    enrichers: dict[tuple[str, str], Callable[[str, str], tuple]] = {}
    adapt_time = _time_adapter()
    new = [visit for visit in wanted if visit["event_id"] not in present]
    rows = [_visit_row(visit, modes[visit["link_id"]], enrichers, adapt_time) for visit in new]
    with transaction.atomic():
        _insert_visits(rows)
        if rows:
            # Inside: a batch rolled back (split in halves below) announces nothing.
            events.announce_after_commit(functools.partial(_clicks, new, rows))
    return len(rows), {(visit["link_id"], utc_hour(visit["visit_time"])) for visit in wanted}


def _clicks(visits: list[dict], rows: list[_VisitRow]) -> list[dict]:
    """The stored visits as analytics.events tells them (for webhooks' link.clicked)."""
    return [
        {
            "event_id": visit["event_id"],
            "link_id": visit["link_id"],
            "code": visit["code"],
            "visit_time": visit["visit_time"],
            "country": row.country,
            "country_code": row.country_code,
            "device_type": row.device_type,
            "referrer": row.referrer,
            "is_bot": bool(row.is_bot),
        }
        for visit, row in zip(visits, rows, strict=True)
    ]
