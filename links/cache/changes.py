"""A change to a link, an alias or the domain table, made known to every process of every node:
this node's processes drop their copies at once (a bumped generation counter), and with Redis
(SHORTURL_LOCAL_REDIRECTS) the change is published on the `shorturl:changes` stream, which every
node's runner reads (apply_remote_changes) to bump its own counters; a process uses its copies
only while its node has read the stream within NODE_SYNC_MAX_LAG seconds.

What could not reach Redis waits in the node's state dir for the node's sync
(send_pending_changes), so that no node keeps a changed link for a day.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from redis.exceptions import RedisError

from core.errors import Unavailable
from core.node_state import generations, local_redirects, node_lock, state_dir
from core.redis_conn import live_redis_client, redis_client, redis_failed, uses_cluster, uses_redis
from links.cache import code_filter
from links.cache.codesets import _build_code_filter, _filter_build, _mark_code_set_incomplete
from links.cache.keys import (
    _ALIASES_GENERATION,
    ALIAS_SET_KEY,
    CHANGES_EPOCH_KEY,
    CHANGES_KEY,
    CODE_SET_KEY,
    code_of_key,
    entry_key,
    version_key,
)
from links.cache.local import process_cache
from links.codes.shape import is_generated_shape

logger = logging.getLogger(__name__)

# Entries kept on the stream: far more than a node reads between two syncs.
CHANGES_KEPT = 100_000
# Per changed code (version_key): a counter bumped with each change, so that a cache fill which
# read the database before the change cannot store what it read after the change's DEL. Kept
# far longer than a fill takes from its database read to its SET; short enough that creating
# links in bulk leaves few counters behind (~70 bytes each).
VERSION_KEPT_SECONDS = 300


class CacheUnavailable(Unavailable):
    """A cached entry could not be dropped: a change to the link must not be reported done."""


def _publish(pipe, keys: list[str]) -> None:
    """Queue, on a pipeline, the stream entry that tells the other nodes these keys changed
    (one entry for the lot: a bulk create publishes 1,000 codes in one XADD)."""
    pipe.xadd(CHANGES_KEY, {"c": " ".join(keys)}, maxlen=CHANGES_KEPT, approximate=True)


def _forget(
    client, codes: list[str], *, bump_versions: bool = True, also=None, transaction: bool = False
) -> None:
    """Drop these codes' Redis entries, bump their versions (so a fill that read the database
    before the change is refused) and tell the other nodes. `also(pipe)` queues more commands.

    On a single Redis it is one pipeline (one MULTI with `transaction`). On a Cluster the notice
    goes only once the drops are acknowledged: its pipeline sends to each master on its own, and
    a node reading the notice first could re-read the old entry under its new tag.
    """
    cluster = uses_cluster()
    with client.pipeline(transaction=transaction and not cluster) as pipe:
        if cluster:  # one key per command: a Cluster pipeline routes each to its slot
            for code in codes:
                pipe.delete(entry_key(code))
        else:
            pipe.delete(*(entry_key(code) for code in codes))
        if bump_versions:
            for code in codes:
                pipe.incr(version_key(code))
                pipe.expire(version_key(code), VERSION_KEPT_SECONDS)
        if also is not None:
            also(pipe)
        if not cluster:
            _publish(pipe, codes)
        pipe.execute()
    if cluster:
        _publish(client, codes)


# --- Changes whose Redis part could not be done (Redis paused or failing) --------------------
# Kept in the node's state dir and sent by the node's sync before it reads the stream, so that
# no node (nor Redis's own entries and sets) keeps a changed link, alias or code for a day.
PENDING_CHANGES = "changes.pending"
_PENDING_LOCK = "changes-pending"


def _remember_pending(keys: list[str]) -> None:
    with node_lock(_PENDING_LOCK), open(state_dir() / PENDING_CHANGES, "a") as handle:
        handle.write("".join(key + "\n" for key in keys))


def send_pending_changes(client) -> int:
    """Do the Redis part of the changes noted while Redis was out of reach; returns how many."""
    path = state_dir() / PENDING_CHANGES
    if not path.exists():
        return 0
    with node_lock(_PENDING_LOCK):
        keys = sorted(set(path.read_text().split()))
        codes = [key for key in keys if key != _ALIASES_GENERATION]
        if _ALIASES_GENERATION in keys:
            _drop_alias_set(client)
        if codes:
            _forget(client, codes)
            if _generated_codes_of(codes):
                _mark_code_set_incomplete(client)  # reloaded before it is trusted
        path.unlink()
    return len(keys)


def _changed_here(keys: list[str]) -> None:
    """Every process of this node drops its copies of `keys` on its next redirect, and the
    node's code filter holds the generated ones (a new code is found on the very next
    redirect; an edited one is in it already)."""
    if local_redirects():
        code_filter.add(_generated_codes_of(keys))
        for key in keys:
            process_cache.invalidate(key)


def _announce(keys: list[str], send: Callable[[object], None], *, consequence: str) -> None:
    """A change to `keys`: this node's processes drop their copies at once; `send(client)` does
    the Redis part (drops, sets) and tells the other nodes. When Redis is out of reach (failing,
    or paused after a failure) the change is noted for the node's sync, which does it once Redis
    answers (send_pending_changes), so no node keeps a changed key for a day."""
    _changed_here(keys)
    if not uses_redis():
        return
    client = live_redis_client()
    try:
        if client is None:
            raise RedisError("paused after an earlier failure")
        send(client)
    except RedisError as exc:
        redis_failed(exc, consequence=consequence)
        _remember_pending(keys)


def announce_changed(keys: list[str], *, consequence: str) -> None:
    """Keys of something kept beside the link entries (the domain table, links.domains) that
    changed: every process of every node reads it again on its next request."""

    def send(client) -> None:
        with client.pipeline(transaction=False) as pipe:
            _publish(pipe, keys)
            pipe.execute()

    _announce(keys, send, consequence=consequence)


def drop(key: str) -> None:
    """Remove the cached entry everywhere; raises CacheUnavailable when Redis cannot be reached.

    A stale entry would keep redirecting for up to SHORTURL_CACHE_TTL, so the caller must not
    go on as if the change had taken effect.
    """
    _changed_here([key])
    if not uses_redis():
        return
    try:
        # One MULTI on a single Redis (on a Cluster a partial failure raises all the same, and
        # the change is rolled back).
        _forget(redis_client(), [key], transaction=True)
    except RedisError as exc:
        logger.error("Redis unavailable; the cached entry for %s could not be dropped", key)
        raise CacheUnavailable(
            "The link cache cannot be reached right now, so nothing was changed. "
            "Please try again in a moment."
        ) from exc


def drop_many(keys: list[str]) -> None:
    """drop() for many keys in one round trip (a bulk change), inside the change's transaction:
    raises CacheUnavailable, so the caller rolls its change back; drops them again once the
    change is committed (a redirect may have re-cached the old rows meanwhile)."""
    if not keys:
        return
    _drop_now(keys)

    def again() -> None:
        try:
            _drop_now(keys)
        except CacheUnavailable:
            _remember_pending(keys)  # logged; the node's sync drops them once Redis answers

    transaction.on_commit(again)


def _drop_now(keys: list[str]) -> None:
    _changed_here(keys)
    if not uses_redis():
        return
    try:
        _forget(redis_client(), keys, transaction=True)
    except RedisError as exc:
        logger.error("Redis unavailable; %d cached entries could not be dropped", len(keys))
        raise CacheUnavailable(
            "The link cache cannot be reached right now, so nothing was changed. "
            "Please try again in a moment."
        ) from exc


def forget_missing_after_commit(keys: list[str]) -> None:
    """New links' keys: once committed, drop any "no such code" entry a redirect cached for them
    before they existed (best effort: at worst the entry runs out after its short TTL)."""

    generated = _generated_codes_of(keys)

    def send(client) -> None:
        # No version bumps: a fill racing a code's creation could at worst cache "no such code"
        # for SHORTURL_NEGATIVE_CACHE_TTL, and a bulk create would leave 1,000 counters behind.
        _forget(
            client,
            keys,
            bump_versions=False,
            also=(lambda pipe: pipe.sadd(CODE_SET_KEY, *generated)) if generated else None,
        )

    if keys:
        transaction.on_commit(lambda: _announce(keys, send, consequence="links are not cached"))


def _generated_codes_of(keys: list[str]) -> list[str]:
    """The generated codes among these keys' codes (the code set and filter hold them bare)."""
    codes = (code_of_key(key) for key in keys)
    return [code for code in codes if is_generated_shape(code)]


def drop_after_commit(key: str) -> None:
    """Drop again once the change is committed: a redirect may have re-cached the old row."""

    def again() -> None:
        try:
            drop(key)
        except CacheUnavailable:
            # Logged by drop. A redirect may have re-cached the old row since the first drop:
            # the node's sync drops it once Redis answers again.
            _remember_pending([key])

    transaction.on_commit(again)


def aliases_added_after_commit(aliases: list[str]) -> None:
    """New aliases join the alias set now and again once their links are committed (a set
    loaded from the database in between would not hold them yet)."""

    def add() -> None:
        def send(client) -> None:
            with client.pipeline(transaction=False) as pipe:
                pipe.sadd(ALIAS_SET_KEY, *aliases)
                _publish(pipe, [_ALIASES_GENERATION])
                pipe.execute()

        _announce(
            [_ALIASES_GENERATION], send, consequence="aliases are checked against the database"
        )

    if aliases:
        add()
        transaction.on_commit(add)


def _drop_alias_set(client) -> None:
    """Drop Redis's alias set (loaded again from the database when next needed) and tell the
    other nodes to reload theirs."""
    with client.pipeline(transaction=False) as pipe:
        pipe.delete(ALIAS_SET_KEY)
        _publish(pipe, [_ALIASES_GENERATION])
        pipe.execute()


def forget_aliases() -> None:
    """Drop the alias set everywhere (it is loaded again from the database when next needed)."""
    _announce(
        [_ALIASES_GENERATION],
        _drop_alias_set,
        consequence="the alias set is loaded again from the database",
    )


# --- Other nodes' changes (services mode; run by the node's runner) --------------------------

_sync: dict[str, object] = {"last_id": None, "epoch": None, "at": 0.0}
# A runner that has not read the stream for this long may have missed trimmed entries.
_RESYNC_AFTER_SECONDS = 60.0


def apply_remote_changes(*, wait: float = 0.0) -> int:
    """Bump this node's counters for every key changed since the last call (on any node), then
    note the sync time. Returns how many changes were read.

    `wait`: when nothing new is there yet, wait up to this many seconds for a change (a
    blocking read of the stream, which returns as soon as another node writes to it): the node's
    sync thread calls it in a loop, so a change reaches every node within milliseconds, not at
    the next poll. A link created through one node is then found on the others at once (their
    code filters learn it from the stream).

    It goes on from where this process last read, also when its sync thread takes the lock
    back from another process: the stream still holds what came since (re-reading what the
    other process applied costs only re-reads). Started with no place to continue from, after
    a pause longer than the stream is sure to cover, or after Redis lost the stream, it bumps
    every counter instead: every process re-reads once.
    """
    client = redis_client()
    started = time.monotonic()
    send_pending_changes(client)
    table = generations()
    epoch = client.get(CHANGES_EPOCH_KEY)
    if epoch is None:
        client.set(CHANGES_EPOCH_KEY, uuid.uuid4().hex, nx=True)
        epoch = client.get(CHANGES_EPOCH_KEY)
    read = 0
    if (
        _sync["last_id"] is None
        or epoch != _sync["epoch"]
        or started - float(_sync["at"]) > _RESYNC_AFTER_SECONDS
    ):
        # Read the stream's end before bumping: a change after it is read on the next call.
        newest = client.xrevrange(CHANGES_KEY, count=1)
        # Codes created between the filter's last add and that end are in no stream read to
        # come: the filter is unused until the build below has read them from the database.
        code_filter.mark_incomplete()
        table.bump_all()
        _sync.update(last_id=newest[0][0] if newest else b"0-0", epoch=epoch)
    else:
        read = _read_changes(client, table, wait=wait)
    _sync["at"] = started
    table.mark_synced(started)
    if local_redirects() and code_filter.needs_build(max_age=settings.SHORTURL_CACHE_TTL):
        # Here, after the stream position is set, so that every code is in the build's
        # database read or read from the stream later (and noted in the build's journal).
        # The sync goes on reading the stream during a long build, so the node's processes
        # keep trusting their entries meanwhile.
        _build_code_filter(meanwhile=lambda: _keep_in_sync(client, table))
    return read


def _read_changes(client, table, *, wait: float = 0.0) -> int:
    """Apply the stream's entries after the sync's position; returns how many were read. The
    first read waits up to `wait` seconds for an entry (redis-py's block=0 would wait forever)."""
    last_id = _sync["last_id"]
    read = 0
    block = max(1, round(wait * 1000)) if wait > 0 else None
    while True:
        answer = client.xread({CHANGES_KEY: last_id}, count=1000, block=block)
        block = None
        entries = answer[0][1] if answer else []
        keys = [key for _, fields in entries for key in fields.get(b"c", b"").decode().split()]
        if keys and local_redirects():
            # Before the bumps: once a process re-reads a code, the filter holds it.
            code_filter.add(_generated_codes_of(keys))
        for key in keys:
            table.bump(key)
        if entries:
            last_id = entries[-1][0]
        read += len(entries)
        if len(entries) < 1000:
            break
    _sync["last_id"] = last_id
    return read


def _keep_in_sync(client, table) -> None:
    """During a long build in the sync: read the stream as the sync would have meanwhile."""
    now = time.monotonic()
    if now - float(_sync["at"]) >= settings.NODE_SYNC_SECONDS:
        _read_changes(client, table)
        _sync["at"] = now
        table.mark_synced(now)


def forget_sync_position() -> None:
    """The next apply_remote_changes starts afresh, and the next ensure_code_filter builds
    (tests)."""
    _sync.update(last_id=None, epoch=None, at=0.0)
    _filter_build.update(next_try=0.0, built_since_start=False)
