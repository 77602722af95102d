"""Visit caps counted in memory, not on the link row (issue #15).

A capped link's click by a person takes one of its visits. Taking it with a conditional UPDATE
of the link row made every such click a database write: 73 redirects/s in the embedded mode
and 454/s in services mode where a plain link answers 25,000 and 14,000 (bench/serve_bench.py,
2026-11-27), so a capped link shared to a crowd (what caps are for) fell over. The count now
lives where the redirect already is, and each take is atomic there:

- services mode: a Redis key per link (`shorturl:{caps}:<id>`), read, compared and incremented by
  one Lua call, so however many processes and nodes race, exactly `max_visits` people get
  through;
- embedded mode (one node): a file per link in the node's state dir, read and written under
  an exclusive `flock`, shared by the node's processes. No round trip at all.

The link row's `visits_used` stays the durable count: a missing counter (a new cap, Redis
restarted or its key evicted, a node's state dir wiped) starts from it, and the node's runner
writes each counter back to it every 2 s (`save_counts`, shorturl_project.embedded), never
lowering it.
What a lost counter can cost is the visits taken since its last save: that many more people
may get through once. While Redis is unreachable, takes fall back to the row's conditional
UPDATE (the count that needs no Redis); once it is back, each side takes the larger count.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.db.models import F, Q
from redis.exceptions import RedisError

from core.db import retry_on_conflict
from core.node_state import state_dir
from core.redis_conn import live_redis_client, redis_failed, uses_redis
from links.cache import database_reads
from links.models import UrlLink

logger = logging.getLogger(__name__)

# One hash slot for all of them (REDIS_CLUSTER=1): a save reads a chunk in one MGET/pipeline.
REDIS_KEY = "shorturl:{{caps}}:{}"
# Links whose counters one save reads at a time (one MGET, one SELECT).
SAVE_CHUNK = 500

# KEYS: the counter. ARGV: the cap, 1 to take a visit (0: only look), the row's count to start
# from ('' when not read yet). Returns 1: through (taken), 0: cap reached, -1: no counter yet
# and no count to start from (the caller reads the row and calls again).
_TAKE = """
local used = redis.call('GET', KEYS[1])
if not used then
  if ARGV[3] == '' then return -1 end
  used = ARGV[3]
  redis.call('SET', KEYS[1], used)
end
if tonumber(used) >= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '1' then redis.call('INCR', KEYS[1]) end
return 1
"""
# KEYS: the counter. ARGV: the row's count. Raises the counter to it (a take counted on the row
# while Redis was unreachable); returns the counter's value afterwards.
_RAISE_TO = """
local used = tonumber(redis.call('GET', KEYS[1]) or '-1')
local row = tonumber(ARGV[1])
if used < row then
  redis.call('SET', KEYS[1], row)
  return row
end
return used
"""
_scripts: dict[str, object] = {}


def _script(client, name: str, source: str):
    script = _scripts.get(name)
    if script is None:
        script = _scripts[name] = client.register_script(source)
    return script


def _row_count(link_id: int) -> int:
    """The link row's durable count (0 for a link gone meanwhile)."""
    database_reads["count"] += 1  # the fast path then recycles the connection, as Django would
    return UrlLink.objects.filter(pk=link_id).values_list("visits_used", flat=True).first() or 0


def take(link_id: int, max_visits: int, *, counted: bool) -> bool:
    """True when the click goes through (a visit taken when `counted`: a person's GET), False
    when the link's `max_visits` are used up. Bots and HEAD requests (`counted` False) look
    without taking: they pass while visits are left."""
    if uses_redis():
        client = live_redis_client()
        if client is not None:
            try:
                return _take_in_redis(client, link_id, max_visits, counted=counted)
            except RedisError as exc:
                redis_failed(exc, consequence="visit caps are counted on the link rows")
        return _take_on_row(link_id, counted=counted)
    try:
        return _take_in_file(link_id, max_visits, counted=counted)
    except OSError:
        logger.exception(
            "The visit cap file of link %s cannot be used; counting on its row", link_id
        )
        return _take_on_row(link_id, counted=counted)


def _take_in_redis(client, link_id: int, max_visits: int, *, counted: bool) -> bool:
    script = _script(client, "take", _TAKE)
    keys = [REDIS_KEY.format(link_id)]
    taking = "1" if counted else "0"
    answer = script(keys=keys, args=[max_visits, taking, ""], client=client)
    if answer == -1:  # the first click since the counter went: start from the row
        answer = script(keys=keys, args=[max_visits, taking, _row_count(link_id)], client=client)
    return answer == 1


def _counter_path(link_id: int) -> Path:
    # No mkdir here: this runs on every capped click; the folder is made when an open misses it.
    return Path(settings.NODE_STATE_DIR) / "visit-caps" / str(link_id)


def _open_counter(link_id: int) -> int:
    path = _counter_path(link_id)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:  # the node's first capped click (or its state dir was wiped)
        (state_dir() / "visit-caps").mkdir(exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def _take_in_file(link_id: int, max_visits: int, *, counted: bool) -> bool:
    fd = _open_counter(link_id)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the node's processes take one at a time
        raw = os.pread(fd, 8, 0)
        used = int.from_bytes(raw, "big") if len(raw) == 8 else _row_count(link_id)
        if used >= max_visits:
            return False
        if counted:
            os.pwrite(fd, (used + 1).to_bytes(8, "big"), 0)
        elif len(raw) != 8:
            os.pwrite(fd, used.to_bytes(8, "big"), 0)
        return True
    finally:
        os.close(fd)  # and with it the lock


@retry_on_conflict(atomic=False)
def _take_on_row(link_id: int, *, counted: bool) -> bool:
    """The conditional UPDATE: the database serialises the row's updates."""
    database_reads["count"] += 1
    open_row = UrlLink.objects.filter(
        Q(max_visits__isnull=True) | Q(visits_used__lt=F("max_visits")), pk=link_id
    )
    if not counted:
        return open_row.exists()
    return open_row.update(visits_used=F("visits_used") + 1) == 1


def _read_files(link_ids: Iterable[int]) -> dict[int, int]:
    counts = {}
    for link_id in link_ids:
        try:
            with open(_counter_path(link_id), "rb") as counter:
                fcntl.flock(counter.fileno(), fcntl.LOCK_SH)
                raw = counter.read(8)
        except FileNotFoundError:
            continue
        if len(raw) == 8:
            counts[link_id] = int.from_bytes(raw, "big")
    return counts


def live_counts(rows: dict[int, int]) -> dict[int, int]:
    """{link id: visits used} for rows {link id: the row's visits_used}: the counter's value
    where there is one and it is ahead of the row (what a visitor meets), else the row's."""
    if not rows:
        return {}
    counts: dict[int, int] = {}
    if uses_redis():
        client = live_redis_client()
        if client is not None:
            ids = list(rows)
            try:
                values = client.mget([REDIS_KEY.format(link_id) for link_id in ids])
            except RedisError as exc:
                redis_failed(exc, consequence="visit caps are counted on the link rows")
            else:
                counts = {
                    link_id: int(value)
                    for link_id, value in zip(ids, values, strict=True)
                    if value is not None
                }
    else:
        counts = _read_files(rows)
    return {link_id: max(used, counts.get(link_id, 0)) for link_id, used in rows.items()}


def save_counts() -> int:
    """Write each capped link's counter back to its row (never lowering it), and, with Redis,
    raise a counter that is behind its row (visits taken on the row while Redis was out of
    reach). Run by each node's runner; returns how many rows were raised."""
    raised = 0
    capped = (
        UrlLink.objects.filter(max_visits__isnull=False, revoked_at__isnull=True)
        .order_by("pk")
        .values_list("pk", "visits_used")
    )
    rows: dict[int, int] = {}
    for link_id, used in capped.iterator(chunk_size=SAVE_CHUNK):
        rows[link_id] = used
        if len(rows) >= SAVE_CHUNK:
            raised += _save_chunk(rows)
            rows = {}
    if rows:
        raised += _save_chunk(rows)
    return raised


def _save_chunk(rows: dict[int, int]) -> int:
    if uses_redis():
        client = live_redis_client()
        if client is None:
            return 0
        script = _script(client, "raise_to", _RAISE_TO)
        pipe = client.pipeline(transaction=False)  # one round trip for the chunk
        for link_id, used in rows.items():
            script(keys=[REDIS_KEY.format(link_id)], args=[used], client=pipe)
        try:
            counts = dict(zip(rows, pipe.execute(), strict=True))
        except RedisError as exc:
            redis_failed(exc, consequence="visit caps are counted on the link rows")
            return 0
    else:
        counts = _read_files(rows)
    raised = 0
    for link_id, used in counts.items():
        if used > rows[link_id]:
            raised += UrlLink.objects.filter(pk=link_id, visits_used__lt=used).update(
                visits_used=used
            )
    return raised
