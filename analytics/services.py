"""Writes for analytics: storing visits, recomputing hourly counts, purging old visits.

Flow with Redis (see docs/analytics.md): the redirect RPUSHes a visit message (analytics.messages)
onto the buffer (analytics.buffer); flush_pending takes batches, enriches them and bulk-inserts
VisitRecords, then marks the (link, hour) pairs it touched; aggregate_hourly recomputes those
HourlyClick rows from VisitRecord. Delivery is at-least-once (a crashed batch is taken again) and
the event id makes it exactly once in effect. Without Redis (embedded mode) the same two steps
read analytics.spool's files instead; store_visits does all of it at once, in-process, for a
visit that cannot wait (Redis down).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import DatabaseError, DataError, connection, transaction
from django.db.models import Count, Max, Min, Q, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone

from analytics import buffer, enrich, events, spool
from analytics.messages import decode_visits
from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    VisitRecord,
    utc_hour,
)
from analytics.selectors import ROLLED_UP_DIMENSIONS, referrer_host
from core import channels
from core.node_state import node_lock
from core.redis_conn import redis_client, uses_cluster
from links.models import UrlLink

logger = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# After this many failed attempts at a batch, it is stored one visit at a time and the visits
# that still fail go to the dead list, so one bad message cannot stop the pipeline.
MAX_ATTEMPTS = 3
_CHUNK = 500
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


@dataclass(frozen=True)
class FlushResult:
    taken: int = 0  # messages taken from Redis (including retried and refused ones)
    stored: int = 0  # new VisitRecord rows
    retry: bool = False  # the batch was a leftover from a failed run
    busy: bool = False  # another flush holds the lock


# --- Visits ------------------------------------------------------------------------------------


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
    enriched: Callable[[str, str], tuple],
    adapt_time: Callable[[datetime], str],
) -> _VisitRow:
    """`enriched` is enrich.enricher() (one per batch); `adapt_time` the connection's datetime
    adapter. A decoded message's fields are str/int already (messages.decode_visit), which is
    what CharField and ForeignKey would hand the adapter anyway; only the datetime needs work."""
    return _VisitRow(
        visit["link_id"],
        visit["code"],
        visit["event_id"],
        adapt_time(visit["visit_time"]),
        visit["referrer"],
        visit["channel"],
        visit["destination"],
        visit["user_agent"],
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
        part = b"(%d,%s,%s,%s,%s,%s,%s,%s)" % (
            row.link_id,
            code,
            _event_id_literal(row.event_id, literal),
            _time_literal(row.visit_time, literal),
            referrer,
            channel,
            destination,
            fragment,
        )
        if parts and size + len(part) > _MAX_STATEMENT_BYTES:
            yield b",".join(parts).decode()
            parts, size = [], 0
        parts.append(part)
        size += len(part) + 1
    if parts:
        yield b",".join(parts).decode()


def _store(visits: list[dict]) -> tuple[int, set[tuple[int, datetime]]]:
    """Insert the visits not stored yet; returns (new rows, touched (link id, hour) pairs).

    Visits whose link has been deleted meanwhile are dropped; an event id already present (a
    batch taken again after a crash) is skipped, which makes re-delivery harmless.
    """
    by_event = {visit["event_id"]: visit for visit in visits}
    live = set(
        UrlLink.objects.filter(pk__in={v["link_id"] for v in by_event.values()}).values_list(
            "pk", flat=True
        )
    )
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
    enriched = enrich.enricher()
    adapt_time = _time_adapter()
    new = [visit for visit in wanted if visit["event_id"] not in present]
    rows = [_visit_row(visit, enriched, adapt_time) for visit in new]
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
            "referrer": visit["referrer"],
            "is_bot": bool(row.is_bot),
        }
        for visit, row in zip(visits, rows, strict=True)
    ]


# Errors that say a visit's values do not fit a column (not that the database is unwell): the
# batch is split in halves until the visit is found, so the others are stored in the same flush
# instead of the batch failing MAX_ATTEMPTS times. messages.decode_visits already fits every field
# to its column; this is for whatever it may not foresee.
_REFUSED_VALUES = (DataError, UnicodeError)


def _store_isolating(
    decoded: list[tuple[bytes | str, dict]],
) -> tuple[int, set[tuple[int, datetime]], list[bytes | str]]:
    """_store of (message, visit) pairs; returns (new rows, touched pairs, refused messages)."""
    try:
        stored, pairs = _store([visit for _, visit in decoded])
    except _REFUSED_VALUES:
        if len(decoded) == 1:
            logger.exception("Visit %r cannot be stored", decoded[0][0])
            return 0, set(), [decoded[0][0]]
    else:
        return stored, pairs, []
    half = len(decoded) // 2
    first, second = _store_isolating(decoded[:half]), _store_isolating(decoded[half:])
    return first[0] + second[0], first[1] | second[1], first[2] + second[2]


# --- Direct path (embedded default, Redis down) ----------------------------------------------


def store_visits(*, messages: Iterable[str | bytes | dict]) -> int:
    """Store visits and update their hours right away, without Redis or a worker."""
    visits = [visit for visit in decode_visits(list(messages)) if visit is not None]
    if not visits:
        return 0
    with transaction.atomic():
        stored, pairs = _store(visits)
        # Same transaction, rows locked first: concurrent direct stores of one hour queue up
        # and the last one counts everybody's visits.
        _recompute_pairs(pairs, lock_first=True)
    return stored


# --- Buffered path (Redis + worker) ----------------------------------------------------------


def _database_answers() -> bool:
    """Whether the database takes a query now; a connection lost to a restart is opened again."""
    for _ in range(2):
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError:
            connection.close()
        else:
            return True
    return False


_outage_warned = {"at": 0.0}


def _flush_batch(client, batch_size: int, lane: buffer.Lane) -> FlushResult:
    # A database that cannot be reached is an outage, not a bad batch: the visits wait in Redis
    # until it answers. Counted as failed attempts, they went to the dead list after three
    # flushes (six seconds), one traceback each (e2e/test_faults.py).
    if not _database_answers():
        if time.monotonic() - _outage_warned["at"] > 60:
            _outage_warned["at"] = time.monotonic()
            logger.warning("The database does not answer: visits wait in Redis until it does")
        return FlushResult()
    token = buffer.acquire(client, lane.lock)
    if token is None:
        return FlushResult(busy=True)
    with buffer.kept_alive(client, lane.lock, token):
        try:
            attempt, messages = buffer.take_batch(client, batch_size, into=lane)
            stored, pairs, dead = _store_batch(messages, attempt)
            if dead:
                logger.error("%d visit message(s) moved to %s", len(dead), buffer.DEAD_KEY)
                buffer.bury(client, dead)
            buffer.finish_batch(client, token, [buffer.hour_member(*p) for p in pairs], of=lane)
        except Exception:
            # The batch stays in the processing list and is taken again by the next flush (a
            # worker that died outright stops renewing its lock, which then lapses within
            # buffer.LOCK_SECONDS). An attempt that failed because the database went away does
            # not count toward MAX_ATTEMPTS: the batch is not at fault.
            if not _database_answers():
                buffer.forgive_attempt(client, lane)
            buffer.release(client, lane.lock, token)
            raise
    return FlushResult(taken=len(messages), stored=stored, retry=attempt > 0)


def _store_batch(
    messages: list[bytes], attempt: int
) -> tuple[int, set[tuple[int, datetime]], list[bytes]]:
    """Store a batch; returns (new rows, touched pairs, messages for the dead list)."""
    decoded = list(zip(messages, decode_visits(messages), strict=True))
    dead = [message for message, visit in decoded if visit is None]
    readable = [(message, visit) for message, visit in decoded if visit is not None]
    if attempt < MAX_ATTEMPTS:
        stored, pairs, refused = _store_isolating(readable)
        return stored, pairs, dead + refused
    # Failed for other reasons than its values MAX_ATTEMPTS times: one visit at a time, so one
    # that keeps failing cannot stop the pipeline.
    logger.warning("Visit batch failed %s times: storing it one visit at a time", attempt)
    stored, pairs = 0, set()
    for message, visit in readable:
        try:
            one_stored, one_pairs = _store([visit])
        except Exception:
            if not _database_answers():
                raise  # the database went away, not this visit: the batch waits
            logger.exception("Visit %r cannot be stored", message)
            dead.append(message)
            continue
        stored += one_stored
        pairs |= one_pairs
    return stored, pairs, dead


@dataclass(frozen=True)
class ReplayResult:
    examined: int  # messages of the dead list looked at
    replayable: int  # of those, messages that decode now: moved back into the buffer
    unreadable: int  # messages that still do not decode: left in the dead list
    stored: int = 0  # replayed visits in the database after the flush (new or stored before)
    new: int = 0  # of those, stored by this replay


class NoVisitBuffer(Exception):
    """There is no Redis, so no buffer and no dead list (the embedded mode logs what it cannot
    store instead)."""


_REPLAY_CHUNK = 1000


def replay_dead_visits(
    *, dry_run: bool = False, progress: Callable[[int, int], None] | None = None
) -> ReplayResult:
    """Move the dead list's messages that decode now (after a fix) back into the buffer, leave
    the others there, then flush: every replayed visit is stored once (event ids), and what is
    refused again goes back to the dead list. `dry_run`: only count what would be replayed."""
    client = redis_client()
    if client is None:
        raise NoVisitBuffer
    token = buffer.acquire(client, buffer.REPLAY_LOCK_KEY)
    if token is None:
        raise buffer.LockBusy("another replay is running")
    with buffer.kept_alive(client, buffer.REPLAY_LOCK_KEY, token):
        try:
            total = client.llen(buffer.DEAD_KEY)
            examined, event_ids, unreadable = 0, [], 0
            while examined < total:
                # Flushes only append: the first `total` messages are the ones to look at.
                start = examined if dry_run else 0
                chunk = buffer.dead_messages(client, start, min(_REPLAY_CHUNK, total - examined))
                if not chunk:
                    break
                decoded = list(zip(chunk, decode_visits(chunk), strict=True))
                good = [message for message, visit in decoded if visit is not None]
                bad = [message for message, visit in decoded if visit is None]
                if not dry_run:
                    buffer.requeue_dead(client, len(chunk), good, bad)
                event_ids += [visit["event_id"] for _, visit in decoded if visit is not None]
                unreadable += len(bad)
                examined += len(chunk)
                if progress is not None:
                    progress(examined, total)
        finally:
            buffer.release(client, buffer.REPLAY_LOCK_KEY, token)
    result = ReplayResult(examined=examined, replayable=len(event_ids), unreadable=unreadable)
    if dry_run or not event_ids:
        return result
    before = _stored_event_ids(event_ids)
    flush_pending(wait=True)
    after = _stored_event_ids(event_ids)
    return dataclasses.replace(result, stored=after, new=after - before)


def _stored_event_ids(event_ids: list[str]) -> int:
    """How many of these event ids have a VisitRecord."""
    unique = sorted(set(event_ids))
    return sum(
        VisitRecord.objects.filter(event_id__in=unique[i : i + _CHUNK]).count()
        for i in range(0, len(unique), _CHUNK)
    )


# --- Spooled path (embedded mode: no Redis, the node's runner) --------------------------------


def _store_spooled(messages: list[str], stored: list[int]) -> None:
    readable = [
        (message, visit)
        for message, visit in zip(messages, decode_visits(messages), strict=True)
        if visit is not None
    ]
    if len(readable) < len(messages):
        logger.error("%d malformed spooled visit message(s) skipped", len(messages) - len(readable))
    spool.mark_hours(
        sorted({buffer.hour_member(v["link_id"], utc_hour(v["visit_time"])) for _, v in readable})
    )
    # A visit the database refuses is logged with its message (there is no dead list without
    # Redis) rather than holding up the spool behind it.
    new_rows, _, _ = _store_isolating(readable)
    stored.append(new_rows)


def _flush_spool(batch_size: int | None) -> int:
    stored: list[int] = []
    spool.drain(lambda messages: _store_spooled(messages, stored), batch_size=batch_size)
    return sum(stored)


def _aggregate_spooled_hours() -> int:
    with node_lock("aggregate"):
        members = spool.take_hours()
        written = _recompute_pairs(p for p in map(buffer.parse_hour_member, members) if p)
        spool.hours_done()
    return written


_untagged_keys_adopted = {"done": False}


def flush_pending(
    *, batch_size: int | None = None, max_seconds: float | None = None, wait: bool = False
) -> int:
    """Flush batches until the buffer is empty or `max_seconds` have passed; returns new rows.

    With Redis, ANALYTICS_FLUSH_LANES lanes flush side by side, each in its own thread on its
    own database connection: while one thread waits for MariaDB to insert its batch (the driver
    lets go of the GIL), another decodes and enriches the next, so one worker process stores
    more visits per second than a single lane can. Lanes that still hold a batch from an
    earlier run (with more lanes, say) are flushed too. Without Redis, stores everything
    spooled. `wait`: when another flush holds a lane's lock, wait for it (up to its expiry)
    instead of leaving; for drain_visits, which promises an empty buffer when it ends.
    """
    client = redis_client()
    if client is None:
        return _flush_spool(batch_size)
    if not _untagged_keys_adopted["done"]:
        if not uses_cluster():
            moved = buffer.adopt_untagged_keys(client)
            if moved:
                logger.info("Took over %d buffered visits from the old key names", moved)
        _untagged_keys_adopted["done"] = True
    batch_size = batch_size or settings.ANALYTICS_BATCH_SIZE
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    # SQLite allows one writer at a time: a second lane would only wait for the first.
    lane_count = 1 if connection.vendor == "sqlite" else settings.ANALYTICS_FLUSH_LANES
    numbers = sorted(set(range(lane_count)) | set(buffer.lanes_with_batches(client)))
    lanes = [buffer.lane(number) for number in numbers]
    if len(lanes) == 1:
        return _flush_lane(client, lanes[0], batch_size, deadline, wait)
    results: dict[int, int | Exception] = {}

    def run_lane(lane: buffer.Lane) -> None:
        try:
            results[lane.number] = _flush_lane(client, lane, batch_size, deadline, wait)
        except Exception as exc:  # noqa: BLE001 (raised again in the caller's thread below)
            results[lane.number] = exc
        finally:
            connection.close()  # this thread's own connection

    threads = [
        threading.Thread(target=run_lane, args=(lane,), name=f"flush-lane-{lane.number}")
        for lane in lanes[1:]
    ]
    for thread in threads:
        thread.start()
    try:
        stored = _flush_lane(client, lanes[0], batch_size, deadline, wait)
    finally:
        for thread in threads:
            thread.join()
    for outcome in results.values():
        if isinstance(outcome, Exception):
            raise outcome
        stored += outcome
    return stored


def _flush_lane(
    client, lane: buffer.Lane, batch_size: int, deadline: float | None, wait: bool
) -> int:
    """One lane's loop: batches until the buffer is empty, the deadline, or a busy lock."""
    waited_until = time.monotonic() + buffer.BUSY_WAIT_SECONDS
    stored = 0
    while True:
        result = _flush_batch(client, batch_size, lane)
        stored += result.stored
        if result.busy:
            if not wait or time.monotonic() > waited_until:
                break
            time.sleep(0.05)
            continue
        if result.taken < batch_size and not result.retry:
            break
        if deadline is not None and time.monotonic() >= deadline:
            break
    return stored


# --- Hourly counts ---------------------------------------------------------------------------


def _upsert_hourly(rows: list[HourlyClick], fields: list[str]) -> None:
    if not rows:
        return
    # MySQL's ON DUPLICATE KEY UPDATE takes no conflict target; SQLite's ON CONFLICT needs one.
    with_target = connection.features.supports_update_conflicts_with_target
    HourlyClick.objects.bulk_create(
        rows,
        batch_size=_CHUNK,
        update_conflicts=True,
        unique_fields=["link", "hour"] if with_target else None,
        update_fields=fields,
    )


def _recompute_breakdowns(visits, pairs: set[tuple[int, datetime]]) -> None:
    """Rewrite the HourlyBreakdown rows of `pairs` from `visits` (which cover exactly those
    hours), then their days' DailyBreakdown sums. The rows of a (link, hour) are replaced, never
    incremented; hours outside `pairs` (e.g. purged ones) are left alone."""
    slot = TruncHour("visit_time", tzinfo=UTC)
    people, bots = visits.filter(is_bot=False), visits.filter(is_bot=True)
    rows = []
    for dimension, field, of_bots in ROLLED_UP_DIMENSIONS:
        source = bots if of_bots else people
        group = {"countries": ["country", "country_code"], "referrers": ["referrer"]}.get(
            dimension, [field]
        )
        sums: dict[tuple, int] = defaultdict(int)
        grouped = source.annotate(slot=slot).values("link_id", "slot", *group)
        for row in grouped.annotate(n=Count("id")).order_by().iterator():
            if dimension == "referrers":
                value, code = referrer_host(row["referrer"]), ""
            elif dimension == "countries":
                value, code = row["country"], row["country_code"]
            else:
                value, code = row[field], ""
            sums[(row["link_id"], row["slot"].astimezone(UTC), value[:255], code)] += row["n"]
        rows += [
            HourlyBreakdown(
                link_id=link_id, hour=hour, dimension=dimension, value=value, code=code, clicks=n
            )
            for (link_id, hour, value, code), n in sums.items()
        ]
    by_hour: dict[datetime, list[int]] = defaultdict(list)
    by_day: dict[datetime, set[int]] = defaultdict(set)
    for link_id, hour in pairs:
        by_hour[hour].append(link_id)
        by_day[hour.replace(hour=0)].add(link_id)
    for hour, link_ids in by_hour.items():
        HourlyBreakdown.objects.filter(hour=hour, link_id__in=link_ids).delete()
    HourlyBreakdown.objects.bulk_create(rows, batch_size=_CHUNK)
    for day, link_ids in by_day.items():
        DailyBreakdown.objects.filter(day=day, link_id__in=link_ids).delete()
        sums = (
            HourlyBreakdown.objects.filter(link_id__in=link_ids, hour__gte=day, hour__lt=day + DAY)
            .values("link_id", "dimension", "value", "code")
            .annotate(n=Sum("clicks"))
            .order_by()
        )
        DailyBreakdown.objects.bulk_create(
            [
                DailyBreakdown(
                    link_id=row["link_id"],
                    day=day,
                    dimension=row["dimension"],
                    value=row["value"],
                    code=row["code"],
                    clicks=row["n"],
                )
                for row in sums
            ],
            batch_size=_CHUNK,
        )


def _set_last_visitors(link_id: int, hours: Iterable[datetime] | None = None) -> None:
    """HourlyClick.last_visitors of the link's `hours` (None: every hour that still has visits)
    from LinkVisitor: how many people's latest visit is in each."""
    visitors = LinkVisitor.objects.filter(link_id=link_id)
    if hours is None:
        oldest = VisitRecord.objects.filter(link_id=link_id).aggregate(t=Min("visit_time"))["t"]
        if oldest is None:
            return
        hours = HourlyClick.objects.filter(link_id=link_id, hour__gte=utc_hour(oldest))
        hours = list(hours.values_list("hour", flat=True))
        counts = dict(
            visitors.values("last_hour").annotate(n=Count("id")).values_list("last_hour", "n")
        )
    else:
        hours, counts = sorted(set(hours)), {}
        for i in range(0, len(hours), _CHUNK):
            chunk = visitors.filter(last_hour__in=hours[i : i + _CHUNK])
            counts |= dict(
                chunk.values("last_hour").annotate(n=Count("id")).values_list("last_hour", "n")
            )
    rows = [HourlyClick(link_id=link_id, hour=h, last_visitors=counts.get(h, 0)) for h in hours]
    _upsert_hourly(rows, ["last_visitors"])


def _recompute_visitors(visits, pairs: set[tuple[int, datetime]]) -> None:
    """Move each person of `visits` to their latest hour in LinkVisitor (never back: a recount of
    an older hour leaves a later visit's hour in place), then recount last_visitors of the hours
    involved: those of `pairs` and the hours people left."""
    latest: dict[int, dict[str, datetime]] = defaultdict(dict)
    rows = visits.filter(is_bot=False).values("link_id", "client_id").annotate(t=Max("visit_time"))
    for row in rows.order_by().iterator():
        latest[row["link_id"]][row["client_id"]] = utc_hour(row["t"])
    hours: dict[int, set[datetime]] = defaultdict(set)
    for link_id, hour in pairs:
        hours[link_id].add(hour)
    with_target = connection.features.supports_update_conflicts_with_target
    for link_id, clients in latest.items():
        ids = sorted(clients)
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            before = dict(
                LinkVisitor.objects.filter(link_id=link_id, client_id__in=chunk).values_list(
                    "client_id", "last_hour"
                )
            )
            moved = [cid for cid in chunk if cid not in before or clients[cid] > before[cid]]
            hours[link_id].update(utc_hour(before[cid]) for cid in moved if cid in before)
            LinkVisitor.objects.bulk_create(
                [
                    LinkVisitor(link_id=link_id, client_id=cid, last_hour=clients[cid])
                    for cid in moved
                ],
                update_conflicts=True,
                unique_fields=["link", "client_id"] if with_target else None,
                update_fields=["last_hour"],
            )
    for link_id, link_hours in hours.items():
        _set_last_visitors(link_id, link_hours)


def _rebuild_visitors(link_ids: Iterable[int]) -> None:
    """LinkVisitor and last_visitors of these links recomputed from all their visits (a repair:
    a visit that stopped counting as a person may move someone's latest hour back)."""
    for link_id in sorted(link_ids):
        with transaction.atomic():
            LinkVisitor.objects.filter(link_id=link_id).delete()
            rows = (
                VisitRecord.objects.filter(link_id=link_id, is_bot=False)
                .values("client_id")
                .annotate(t=Max("visit_time"))
                .order_by()
                .iterator(chunk_size=5000)
            )
            batch = []
            for row in rows:
                batch.append(
                    LinkVisitor(
                        link_id=link_id, client_id=row["client_id"], last_hour=utc_hour(row["t"])
                    )
                )
                if len(batch) >= 5000:
                    LinkVisitor.objects.bulk_create(batch, batch_size=1000)
                    batch = []
            LinkVisitor.objects.bulk_create(batch, batch_size=1000)
            _set_last_visitors(link_id)


def _recompute(
    *, start: datetime, end: datetime, link_ids: list[int] | None = None, visitors: bool = True
) -> int:
    """Recompute every HourlyClick row of [start, end) (those links only, if given), with the
    roll-ups the stats read instead of the visits: the hours' breakdown rows (and their days'
    sums) and, unless `visitors` is off, each person's latest hour (LinkVisitor, last_visitors).
    """
    visits = VisitRecord.objects.filter(visit_time__gte=start, visit_time__lt=end)
    if link_ids is not None:
        visits = visits.filter(link_id__in=link_ids)
    counts = (
        visits.annotate(slot=TruncHour("visit_time", tzinfo=UTC))
        .values("link_id", "slot")
        .annotate(
            clicks=Count("id", filter=Q(is_bot=False)),
            unique_visitors=Count("client_id", filter=Q(is_bot=False), distinct=True),
            bot_clicks=Count("id", filter=Q(is_bot=True)),
        )
        .order_by()
    )
    rows = [
        HourlyClick(
            link_id=row["link_id"],
            hour=row["slot"].astimezone(UTC),
            clicks=row["clicks"],
            unique_visitors=row["unique_visitors"],
            bot_clicks=row["bot_clicks"],
            rolled_up=True,
        )
        for row in counts
    ]
    if not rows:
        return 0
    pairs = {(row.link_id, row.hour) for row in rows}
    with transaction.atomic():
        fields = ["clicks", "unique_visitors", "bot_clicks", "rolled_up", "updated_at"]
        _upsert_hourly(rows, fields)
        _recompute_breakdowns(visits, pairs)
        if visitors:
            _recompute_visitors(visits, pairs)
    return len(rows)


def _recompute_pairs(pairs: Iterable[tuple[int, datetime]], *, lock_first: bool = False) -> int:
    by_hour: dict[datetime, set[int]] = defaultdict(set)
    for link_id, hour in pairs:
        by_hour[utc_hour(hour)].add(link_id)
    written = 0
    for hour, link_ids in sorted(by_hour.items()):
        ordered = sorted(link_ids)
        for i in range(0, len(ordered), _CHUNK):
            chunk = ordered[i : i + _CHUNK]
            if lock_first:
                # Insert-or-touch takes the rows' write locks before the counts are read.
                _upsert_hourly([HourlyClick(link_id=pk, hour=hour) for pk in chunk], ["updated_at"])
            written += _recompute(start=hour, end=hour + HOUR, link_ids=chunk)
    return written


def aggregate_hourly(
    *, pairs: Iterable[tuple[int, datetime]] | None = None, wait: bool = False
) -> int:
    """Recompute the HourlyClick rows of the given (link id, hour) pairs; returns rows written.

    Without `pairs`, the pairs flush_visits marked (in Redis, or in the spool's file); returns
    0 at once when another aggregation is running, unless `wait`. Idempotent: a recompute from
    VisitRecord, never an increment, so running it twice gives the same rows. Hours whose visits
    have all been purged keep their rows.
    """
    if pairs is not None:
        return _recompute_pairs(pairs)
    client = redis_client()
    if client is None:
        return _aggregate_spooled_hours()
    token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    deadline = time.monotonic() + buffer.BUSY_WAIT_SECONDS
    while token is None and wait and time.monotonic() < deadline:
        time.sleep(0.05)
        token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    if token is None:
        return 0
    with (
        buffer.kept_alive(client, buffer.AGGREGATE_LOCK_KEY, token),
        buffer.hours_to_aggregate(client, token=token) as pending,
    ):
        return _recompute_pairs(pending)


def rebuild_hourly(*, since: datetime, progress: Callable[[int, int], None] | None = None) -> int:
    """Recompute every HourlyClick row from `since` to now, a day at a time; returns rows.

    For repairs (a changed definition of "bot", a restored backup). Hours with no visits left
    (purged) are not touched. The roll-ups go with them (see _recompute); each person's latest
    hour is recomputed from all the visits of the links visited since `since`.
    """
    start = utc_hour(since)
    end = utc_hour(timezone.now()) + HOUR
    days = max(1, -(-(end - start) // DAY))
    written = 0
    for day in range(days):
        window_start = start + day * DAY
        written += _recompute(start=window_start, end=min(window_start + DAY, end), visitors=False)
        if progress is not None:
            progress(day + 1, days)
    since_start = VisitRecord.objects.filter(visit_time__gte=start).order_by()
    _rebuild_visitors(set(since_start.values_list("link_id", flat=True).distinct()))
    return written


@dataclass(frozen=True)
class ReclassifyResult:
    examined: int  # visits read
    changed: int  # visits whose derived fields changed
    hours: int  # HourlyClick rows recomputed (with their breakdowns)


def reclassify_visits(
    *,
    since: datetime | None = None,
    geo: bool = False,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> ReclassifyResult:
    """Run the User-Agent detectors (bot, browser, OS, device) again over stored visits, and with
    `geo` the place and network lookups too (from the stored address: with ANONYMIZE_IP that is
    the visitor's /24 or /48 network); then recompute the hours whose visits changed, and the
    people of links where someone turned out to be a bot (or the other way round).

    For after a detector or GeoIP database update. The visitor id (client_id) is never touched:
    it was derived from the full address, which may no longer be stored.
    """
    visits = VisitRecord.objects.order_by()
    if since is not None:
        visits = visits.filter(visit_time__gte=since)
    total = visits.count()
    fields = list(enrich.UserAgentInfo._fields) + (list(enrich.GeoInfo._fields) if geo else [])
    examined = changed = 0
    pairs: set[tuple[int, datetime]] = set()
    people_changed: set[int] = set()
    last_id = 0
    while True:
        chunk = list(
            visits.filter(pk__gt=last_id)
            .order_by("pk")
            .only("link_id", "visit_time", "user_agent", "client_ip", *fields)[:batch_size]
        )
        if not chunk:
            break
        last_id = chunk[-1].pk
        updated = []
        for visit in chunk:
            if geo:
                everything = enrich.enrich(client_ip=visit.client_ip, user_agent=visit.user_agent)
                derived = {name: everything[name] for name in fields}
            else:
                derived = enrich.parse_user_agent(visit.user_agent)._asdict()
            if all(getattr(visit, name) == value for name, value in derived.items()):
                continue
            if derived["is_bot"] != visit.is_bot:
                people_changed.add(visit.link_id)
            for name, value in derived.items():
                setattr(visit, name, value)
            updated.append(visit)
            pairs.add((visit.link_id, utc_hour(visit.visit_time)))
        VisitRecord.objects.bulk_update(updated, fields, batch_size=_CHUNK)
        examined += len(chunk)
        changed += len(updated)
        if progress is not None:
            progress(examined, total)
    hours = _recompute_pairs(pairs)
    _rebuild_visitors(people_changed)
    return ReclassifyResult(examined=examined, changed=changed, hours=hours)


def purge_visits(*, older_than_days: int) -> int:
    """Delete VisitRecords older than `older_than_days` days, keeping their HourlyClick rows.

    The cut-off is a whole hour, so no hour is left half purged (a later rebuild would count it
    from half its visits). Pending hours are aggregated first so no count is lost.
    """
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    aggregate_hourly()
    cutoff = utc_hour(timezone.now() - timedelta(days=older_than_days))
    deleted = 0
    while True:
        ids = list(
            VisitRecord.objects.filter(visit_time__lt=cutoff)
            .order_by()
            .values_list("pk", flat=True)[:5000]
        )
        if not ids:
            return deleted
        deleted += VisitRecord.objects.filter(pk__in=ids).delete()[0]
