"""The Redis visit buffer's protocol (services mode): its keys, its Lua scripts, its locks.

The redirect RPUSHes messages onto VISITS_KEY (analytics.capture, or the fused Lua call in
links.cache). A flush takes a batch into its lane's processing list (taken again if the flush
dies), and once the batch is committed marks the (link, hour) pairs it touched in HOURS_KEY and
drops the batch; a roll-up moves those pairs aside into AGGREGATING_KEY while it recounts them.
The database side of both steps is in analytics.services.

Lanes: several flushes store batches side by side, each under its own lock with its own
processing list (a Lane), so one worker process can prepare one batch while the database
inserts another, and several workers can share a backlog. Lane 0 keeps the key names of the
single-lane releases.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# Raw Redis keys (not behind the cache's KEY_PREFIX: the worker and a Lua script read them as
# is). The scripts below touch several at once, so all share the hash tag {buffer}: one slot on
# a Redis Cluster.
VISITS_KEY = "analytics:{buffer}:visits"  # list: visit messages, RPUSHed by redirects
PROCESSING_KEY = "analytics:{buffer}:processing"  # list: the batch lane 0 is storing
ATTEMPTS_KEY = "analytics:{buffer}:attempts"  # int: how often lane 0's batch was retried
DEAD_KEY = "analytics:{buffer}:dead"  # list: messages that could not be stored (for a human)
HOURS_KEY = "analytics:{buffer}:hours"  # set: "link_id:hour_epoch" pairs waiting for roll-up
AGGREGATING_KEY = "analytics:{buffer}:aggregating"  # set: the pairs a roll-up is recomputing
FLUSH_LOCK_KEY = "analytics:{buffer}:lock:flush"  # lane 0's
AGGREGATE_LOCK_KEY = "analytics:{buffer}:lock:aggregate"

# The names before the hash tag (until 2026-11-23), on a single Redis: what a flush finds there
# is taken over once (see adopt_untagged_keys), so an upgrade loses no buffered visit.
_UNTAGGED_LISTS = {
    "analytics:visits": VISITS_KEY,
    "analytics:visits:processing": VISITS_KEY,  # stored again; event ids keep each visit once
    "analytics:visits:dead": DEAD_KEY,
}
_UNTAGGED_SETS = {"analytics:hours": HOURS_KEY, "analytics:hours:aggregating": HOURS_KEY}
_UNTAGGED_DROPPED = (
    "analytics:visits:attempts",
    "analytics:lock:flush",
    "analytics:lock:aggregate",
)
# KEYS: old list, new list. Appends the old list's items to the new one, then drops the old.
_ADOPT_LIST = """
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for i = 1, #items, 500 do
  redis.call('RPUSH', KEYS[2], unpack(items, i, math.min(i + 499, #items)))
end
redis.call('DEL', KEYS[1])
return #items
"""

# A lock lives this long unless its holder renews it (kept_alive, every RENEW_SECONDS while it
# works): how long a holder that died without letting go (a worker SIGKILLed mid-flush) holds up
# its lane or the roll-up. A live holder keeps it however long its batch takes; one stalled past
# it (a frozen process) loses it, and a flush that outlives its lock cannot double-count (event
# ids), only repeat work.
LOCK_SECONDS = 5
RENEW_SECONDS = 1.0
# How long a flush or roll-up told to wait (drain_visits) waits for a lock another one holds.
BUSY_WAIT_SECONDS = 60

# KEYS: buffer, processing, attempts. ARGV: batch size. Returns {attempt, records}.
# A batch left in the processing list by a flush that crashed is taken again first.
_TAKE_BATCH = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {redis.call('INCR', KEYS[3]), redis.call('LRANGE', KEYS[2], 0, -1)}
end
redis.call('DEL', KEYS[3])
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local n = #items
for i = 1, n, 500 do
  redis.call('RPUSH', KEYS[2], unpack(items, i, math.min(i + 499, n)))
end
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return {0, items}
"""

# KEYS: lock, processing, attempts, hours. ARGV: lock token, "link:hour" pairs...
# Marks the touched hours, then drops the stored batch unless another flush took over the lock
# (it then stores the same batch again, harmlessly).
_FINISH_BATCH = """
for i = 2, #ARGV, 500 do
  redis.call('SADD', KEYS[4], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[1])
  return 1
end
return 0
"""

# KEYS: hours, aggregating. Moves the pending pairs aside (merging a leftover set from a crashed
# run) so that pairs marked while the recompute runs wait for the next one instead of being lost.
_TAKE_HOURS = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('SUNIONSTORE', KEYS[2], KEYS[1], KEYS[2])
    redis.call('DEL', KEYS[1])
  else
    redis.call('RENAME', KEYS[1], KEYS[2])
  end
end
return redis.call('SMEMBERS', KEYS[2])
"""

# KEYS: lock. ARGV: token, milliseconds. Extends the lock only while it is still the caller's.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS: dead list, buffer. ARGV: how many messages to drop from the dead list's head, then the
# messages to move into the buffer, then those to put back at the dead list's tail (their counts
# first: ARGV[2], ARGV[3]).
_REQUEUE_DEAD = """
local n, good, bad = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('LTRIM', KEYS[1], n, -1)
for i = 4, 3 + good, 500 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 499, 3 + good)))
end
for i = 4 + good, 3 + good + bad, 500 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 499, 3 + good + bad)))
end
return n
"""

# KEYS: lock, extra key to drop. ARGV: token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if KEYS[2] then redis.call('DEL', KEYS[2]) end
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def adopt_untagged_keys(client) -> int:
    """Take over what the untagged key names of an older release hold (a single Redis only;
    a Cluster never had them). Returns how many visit messages were moved."""
    moved = 0
    for old, new in _UNTAGGED_LISTS.items():
        if client.exists(old):
            moved += client.eval(_ADOPT_LIST, 2, old, new)
    for old, new in _UNTAGGED_SETS.items():
        if client.exists(old):
            client.sunionstore(new, [new, old])
            client.delete(old)
    for old in _UNTAGGED_DROPPED:
        client.delete(old)
    return moved


# --- (link, hour) pairs ------------------------------------------------------------------------


def hour_member(link_id: int, hour: datetime) -> str:
    """A (link, UTC hour) pair as stored in HOURS_KEY and in the spool's pending-hours file."""
    return f"{link_id}:{int(hour.timestamp())}"


def parse_hour_member(member: bytes | str) -> tuple[int, datetime] | None:
    text = member.decode() if isinstance(member, bytes) else member
    try:
        link_id, epoch = text.split(":")
        return int(link_id), datetime.fromtimestamp(int(epoch), tz=UTC)
    except ValueError:
        return None


# --- Locks -------------------------------------------------------------------------------------


class LockBusy(Exception):
    """Another process holds the lock."""


def acquire(client, key: str) -> str | None:
    token = uuid.uuid4().hex
    return token if client.set(key, token, nx=True, ex=LOCK_SECONDS) else None


@contextmanager
def kept_alive(client, key: str, token: str) -> Iterator[None]:
    """Renew the lock `key` (ours, `token`) every RENEW_SECONDS while the block runs, from a
    thread: if this process dies, renewals stop and the lock is free LOCK_SECONDS later."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(RENEW_SECONDS):
            try:
                if not client.eval(_RENEW, 1, key, token, int(LOCK_SECONDS * 1000)):
                    return  # let go, or taken over after a stall: no longer ours to keep
            except (RedisError, OSError) as exc:
                logger.warning("Could not renew the lock %s (%s); trying again", key, exc)

    keeper = threading.Thread(target=renew, name=f"lock keeper {key}", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join()


def release(client, key: str, token: str, *, drop: str | None = None) -> None:
    """Let go of a lock we still hold (and, with it, delete `drop`)."""
    keys = [key, drop] if drop else [key]
    client.eval(_RELEASE, len(keys), *keys, token)


# --- Batches of visits -------------------------------------------------------------------------

# Lanes looked at for leftover batches, whatever ANALYTICS_FLUSH_LANES says now: a batch left by
# a flush that ran with more lanes before a restart is still stored.
MAX_LANES = 16


@dataclass(frozen=True)
class Lane:
    """One flush's keys: its lock, the batch it is storing, and how often that was retried."""

    number: int
    lock: str
    processing: str
    attempts: str


def lane(number: int) -> Lane:
    if number == 0:
        return Lane(0, FLUSH_LOCK_KEY, PROCESSING_KEY, ATTEMPTS_KEY)
    return Lane(
        number,
        f"{FLUSH_LOCK_KEY}:{number}",
        f"{PROCESSING_KEY}:{number}",
        f"{ATTEMPTS_KEY}:{number}",
    )


def lanes_with_batches(client) -> list[int]:
    """The lanes whose processing list holds a batch (left by a flush that failed or died)."""
    with client.pipeline(transaction=False) as pipe:
        for number in range(MAX_LANES):
            pipe.exists(lane(number).processing)
        return [number for number, held in enumerate(pipe.execute()) if held]


def take_batch(client, batch_size: int, into: Lane) -> tuple[int, list[bytes]]:
    """(attempt, messages): the lane's leftover batch of a failed flush first (attempt > 0),
    else up to `batch_size` new messages moved into the lane's processing list."""
    attempt, messages = client.eval(
        _TAKE_BATCH, 3, VISITS_KEY, into.processing, into.attempts, batch_size
    )
    return attempt, messages


def forgive_attempt(client, of: Lane) -> None:
    """Take back the attempt counted when the lane's batch was taken (its failure was not the
    batch's fault): the next take counts the same attempt again."""
    client.decr(of.attempts)


def finish_batch(client, token: str, members: list[str], of: Lane) -> None:
    """After the batch committed: mark its hours and drop it (unless the lock was lost)."""
    client.eval(_FINISH_BATCH, 4, of.lock, of.processing, of.attempts, HOURS_KEY, token, *members)


def bury(client, messages: list) -> None:
    """Keep messages that cannot be stored where a human can look at them."""
    client.rpush(DEAD_KEY, *messages)


REPLAY_LOCK_KEY = "analytics:{buffer}:lock:replay"


def dead_messages(client, start: int, count: int) -> list[bytes]:
    """`count` messages of the dead list from position `start` on."""
    return client.lrange(DEAD_KEY, start, start + count - 1)


def requeue_dead(client, taken: int, replayable: list, unreadable: list) -> None:
    """Drop the dead list's first `taken` messages, in one step move `replayable` (of those)
    into the buffer and put `unreadable` back at the dead list's tail. The caller holds
    REPLAY_LOCK_KEY (flushes only ever append to the dead list)."""
    client.eval(
        _REQUEUE_DEAD,
        2,
        DEAD_KEY,
        VISITS_KEY,
        taken,
        len(replayable),
        len(unreadable),
        *replayable,
        *unreadable,
    )


# --- Hours waiting for their roll-up -----------------------------------------------------------


@contextmanager
def hours_to_aggregate(client, *, token: str) -> Iterator[list[tuple[int, datetime]]]:
    """The pending pairs, moved aside; they are dropped only when the block completes (a
    failed roll-up leaves them for the next one). The caller holds AGGREGATE_LOCK_KEY."""
    members = client.eval(_TAKE_HOURS, 2, HOURS_KEY, AGGREGATING_KEY)
    try:
        yield [pair for pair in map(parse_hour_member, members) if pair is not None]
    except BaseException:
        release(client, AGGREGATE_LOCK_KEY, token)
        raise
    release(client, AGGREGATE_LOCK_KEY, token, drop=AGGREGATING_KEY)


def status(client) -> dict[str, int]:
    """What waits in Redis: buffered visits, the batch being stored, hours waiting for
    aggregation, messages that could not be stored."""
    with client.pipeline(transaction=False) as pipe:
        pipe.llen(VISITS_KEY)
        pipe.scard(HOURS_KEY)
        pipe.scard(AGGREGATING_KEY)
        pipe.llen(DEAD_KEY)
        for number in range(MAX_LANES):
            pipe.llen(lane(number).processing)
        buffered, hours, aggregating, dead, *processing = pipe.execute()
    return {
        "buffered": buffered,
        "processing": sum(processing),
        "pending_hours": hours + aggregating,
        "dead": dead,
    }
