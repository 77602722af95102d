"""Visits in, rows out: the three ways a visit message becomes a VisitRecord.

- direct (`store_visits`): a visit that cannot wait (Redis down), stored and counted at once;
- buffered (`flush_pending` with Redis): batches taken from analytics.buffer, lanes side by
  side, a batch that keeps failing split up and its bad visits sent to the dead list;
- spooled (`flush_pending` without Redis): the node's analytics.spool files drained.

The buffered and spooled paths mark the (link, hour)s they touched for
analytics.services.rollups.aggregate_hourly; the INSERT itself is analytics.services.inserts'.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, DataError, connection

from analytics import buffer, spool
from analytics.messages import decode_visits
from analytics.models import utc_hour
from analytics.services.inserts import _store
from analytics.services.rollups import _recompute_pairs
from core.db import retry_on_conflict
from core.node_state import NodeLockBusy
from core.redis_conn import redis_client, uses_cluster

logger = logging.getLogger(__name__)

# After this many failed attempts at a batch, it is stored one visit at a time and the visits
# that still fail go to the dead list, so one bad message cannot stop the pipeline.
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class FlushResult:
    taken: int = 0  # messages taken from Redis (including retried and refused ones)
    stored: int = 0  # new VisitRecord rows
    retry: bool = False  # the batch was a leftover from a failed run
    busy: bool = False  # another flush holds the lock


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


@retry_on_conflict
def store_visits(*, messages: Iterable[str | bytes | dict]) -> int:
    """Store visits and update their hours right away, without Redis or a worker."""
    visits = [visit for visit in decode_visits(list(messages)) if visit is not None]
    if not visits:
        return 0
    # One transaction (the unit's), rows locked first: concurrent direct stores of one hour
    # queue up and the last one counts everybody's visits.
    stored, pairs = _store(visits)
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


def _flush_spool(batch_size: int | None, deadline: float | None) -> int:
    stored: list[int] = []
    # NodeLockBusy: another process of the node is draining the spool, and stores what waits.
    with contextlib.suppress(NodeLockBusy):
        spool.drain(
            lambda messages: _store_spooled(messages, stored),
            batch_size=batch_size,
            deadline=deadline,
        )
    return sum(stored)


# --- Both: flush_pending -----------------------------------------------------------------------


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
    `max_seconds` holds in both modes: without Redis, the spool's node lock is waited for that
    long at most (the process holding it is draining) and batches stop once it has passed.
    """
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    client = redis_client()
    if client is None:
        return _flush_spool(batch_size, deadline)
    if not _untagged_keys_adopted["done"]:
        if not uses_cluster():
            moved = buffer.adopt_untagged_keys(client)
            if moved:
                logger.info("Took over %d buffered visits from the old key names", moved)
        _untagged_keys_adopted["done"] = True
    batch_size = batch_size or settings.ANALYTICS_BATCH_SIZE
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
