"""The `pool` strategy: codes generated ahead of time, claimed once each, refilled in the
background; and the pool's report for the overview and the admin.

Codes are `UniqueCode` rows (the unique index is the ground truth) mirrored in a Redis set that
SPOP claims from atomically. Without Redis, unused rows are claimed straight from the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from redis.exceptions import RedisError

from core.db import on_rollback
from core.redis_conn import live_redis_client, redis_failed, sadd_all, uses_redis
from links.codes.base import Candidate, CodeStrategy
from links.codes.shape import random_code
from links.models import CodeType, UniqueCode, UniqueCodeStatus, UrlLink

POOL_SET_KEY = "shorturl:code-pool"


def pool_refill(*, batch: int | None = None, progress=None) -> int:
    """Generate `batch` fresh codes, store them as unused rows, and add them to the Redis set.

    Returns how many new codes were stored. `progress(done, total)` is called per chunk.
    """
    batch = batch or settings.SHORTURL_POOL_BATCH
    chunk = 1000
    stored = 0
    client = live_redis_client()
    while stored < batch:
        size = min(chunk, batch - stored)
        codes = {random_code() for _ in range(size)}
        existing = set(
            UniqueCode.objects.filter(code__in=codes).values_list("code", flat=True)
        ) | set(UrlLink.objects.filter(code__in=codes).values_list("code", flat=True))
        fresh = sorted(codes - existing)
        UniqueCode.objects.bulk_create(
            [UniqueCode(code=c) for c in fresh],
            ignore_conflicts=True,
        )
        if client is not None and fresh:
            # Only committed rows may be handed out: a create that claims a code whose row is
            # still being inserted waits on the inserting transaction, which may itself be
            # waiting for that create (both hold one owner's turn or row, see hold_owner).
            transaction.on_commit(partial(_publish, client, fresh))
        stored += len(fresh)
        if progress:
            progress(stored, batch)
    return stored


def _publish(client, codes: list[str]) -> None:
    try:
        client.sadd(POOL_SET_KEY, *codes)
    except RedisError as exc:
        redis_failed(exc, consequence="new pool codes are served from the database")


def _give_back(popped: list[str]) -> None:
    # All of them, without asking the database (whose connection may be the one that failed):
    # the set tolerates codes already used, which _claim_popped skips.
    client = live_redis_client()
    if client is not None:
        _publish(client, popped)


def pool_status() -> dict[str, int | None]:
    counts = {s: 0 for s in UniqueCodeStatus.values}
    for row in UniqueCode.objects.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    redis_size = None
    client = live_redis_client()
    if client is not None:
        try:
            redis_size = client.scard(POOL_SET_KEY)
        except RedisError:
            redis_size = None  # shown as unknown on the status pages
    return {**counts, "redis": redis_size}


def pool_needs_refill() -> bool:
    """Below the low-water mark in the set Redis serves from (or the DB when there is no Redis)."""
    client = live_redis_client()
    if client is not None:
        try:
            return client.scard(POOL_SET_KEY) < settings.SHORTURL_POOL_MIN
        except RedisError as exc:
            redis_failed(exc, consequence="the code pool is judged by its database rows")
    unused = UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED)
    return unused[: settings.SHORTURL_POOL_MIN].count() < settings.SHORTURL_POOL_MIN


def pool_load_redis_from_db() -> int:
    """After a Redis restart, hand the unused rows back to the set (duplicates are harmless)."""
    client = live_redis_client()
    if client is None:
        return 0
    codes = UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).values_list("code", flat=True)
    return sadd_all(client, POOL_SET_KEY, codes.iterator(chunk_size=5000))


def pool_refill_if_low() -> int:
    """Top the pool up when it is under its low-water mark (and the pool strategy is in use)."""
    if settings.SHORTURL_CODE_STRATEGY != CodeType.POOL or not pool_needs_refill():
        return 0
    return pool_refill()


REFILL_TASK = "links.tasks.refill_code_pool_task"


def _request_refill() -> None:
    if not uses_redis():
        return  # embedded mode: the node's background runner refills, off the request path
    # Sent by name: the task module imports this one, and this one never imports it back.
    transaction.on_commit(lambda: current_app.send_task(REFILL_TASK))


def _pop_from_redis(count: int) -> list[str]:
    """SPOP up to `count` codes (and ask for a refill when the set runs low); [] without Redis."""
    client = live_redis_client()
    if client is None:
        return []
    try:
        pipe = client.pipeline(transaction=False)
        pipe.spop(POOL_SET_KEY, count)
        pipe.scard(POOL_SET_KEY)
        popped, left = pipe.execute()
    except RedisError as exc:
        redis_failed(exc, consequence="pool codes are claimed from the database")
        return []
    if left < settings.SHORTURL_POOL_MIN:
        _request_refill()
    return [c.decode() if isinstance(c, bytes) else c for c in popped or []]


def _mark_used(rows: dict[int, str]) -> list[str]:
    UniqueCode.objects.filter(id__in=rows).update(status=UniqueCodeStatus.USED)
    return list(rows.values())


class _SomeAlreadyUsed(Exception):
    pass


def _claim_popped(popped: list[str]) -> list[str]:
    """The popped codes whose rows were still unused, now marked used.

    Usually every one is: then a single UPDATE claims them all. When the row count says some
    were not (handed out by the database path meanwhile), that UPDATE is rolled back and the
    rows still unused are read and locked first, so only those are claimed.
    """
    try:
        with transaction.atomic():
            updated = UniqueCode.objects.filter(
                code__in=popped, status=UniqueCodeStatus.UNUSED
            ).update(status=UniqueCodeStatus.USED)
            if updated != len(popped):
                raise _SomeAlreadyUsed
        return popped
    except _SomeAlreadyUsed:
        pass
    return _mark_used(
        dict(
            UniqueCode.objects.select_for_update()
            .filter(code__in=popped, status=UniqueCodeStatus.UNUSED)
            .values_list("id", "code")
        )
    )


def pool_claim(count: int) -> list[str]:
    """Up to `count` unused pool codes, each handed out once, in a few round trips.

    Redis SPOP first; the set may hold codes the database path already handed out, so only
    rows still unused count. Then unused rows straight from the database, skipping rows other
    transactions hold (SKIP LOCKED; SQLite has a single writer and ignores the clause). An
    empty pool is refilled inline once. The UrlLink unique index stays the ground truth.
    Called within a create's unit of work (core.db.retry_on_conflict), which is what a conflict
    runs again.
    """
    claimed: list[str] = []
    popped = _pop_from_redis(count)
    if popped:
        # If the unit of work is rolled back (a write conflict retried, or any error, while
        # claiming them or later), the popped codes still unused go back into the set: a retry
        # would otherwise leave them out until the set is next loaded from the database.
        on_rollback(partial(_give_back, popped))
        claimed += _claim_popped(popped)
    for attempt in range(2):
        missing = count - len(claimed)
        if missing <= 0:
            break
        if attempt:
            # Empty pool (first run, or beat not running): refill inline, then claim again.
            pool_refill(batch=max(missing, settings.SHORTURL_POOL_MIN))
        claimed += _mark_used(
            dict(
                UniqueCode.objects.select_for_update(skip_locked=True)
                .filter(status=UniqueCodeStatus.UNUSED)
                .order_by("id")
                .values_list("id", "code")[:missing]
            )
        )
    return claimed


class PoolStrategy(CodeStrategy):
    name = CodeType.POOL

    def candidates(self, long_url: str) -> Iterator[Candidate]:
        for _ in range(50):
            claimed = pool_claim(1)
            if not claimed:
                break
            yield Candidate(code=claimed[0], code_type=CodeType.POOL)


# --- Report ------------------------------------------------------------------------------------


def pool_usage(*, since) -> dict[str, int]:
    """How fast links are being made: {"used": pool codes handed out, "links_created"} since
    `since` (the overview turns it into "the pool lasts about N hours").

    Counted from the links (a pool code is used exactly when a pool link is created), because
    the pool marks its rows used with a bulk UPDATE that leaves their timestamps alone.
    """
    created = UrlLink.objects.filter(created_at__gte=since)
    return created.aggregate(
        used=Count("id", filter=Q(code_type=CodeType.POOL)), links_created=Count("id")
    )


def pool_report() -> dict:
    """The code pool as the overview and the admin show it: `pool` (counts by status),
    `pool_usage` (the last 24 hours) and `pool_runway_hours` (how long the unused codes last
    at that rate; None when no code was used)."""
    pool = pool_status()
    usage = pool_usage(since=timezone.now() - timedelta(hours=24))
    unused = pool.get("unused") or 0
    runway = unused / usage["used"] * 24 if usage["used"] else None
    return {"pool": pool, "pool_usage": usage, "pool_runway_hours": runway}
