"""Per-key request limits, counted where every process and node sees the same number.

Each key's requests are counted in fixed one-minute windows (Unix time // 60):

- Services mode (the cache is Redis): one counter per key and minute in Redis, incremented
  atomically (INCR), which every worker of every node shares.
- Embedded mode (no Redis: each process's cache is its own): one ApiKeyWindow row per key and
  minute, incremented by a single `UPDATE … SET count = count + 1` and read back in the same
  transaction, so the update holds the row (MariaDB) or the database (SQLite) until the count is
  read: two processes never read the same number. Services mode falls back to it while Redis
  does not answer, so a limit still holds then.

A request past the limit is counted too (its key is refused until the minute turns, however
often it asks), and its answer is 429 with Retry-After: the seconds left in the minute.
"""

from __future__ import annotations

import math
import time

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F

from accounts.models import ApiKey, ApiKeyWindow
from core.api.throttles import KeyLimit
from core.db import retry_on_conflict
from core.redis_conn import uses_redis

WINDOW_SECONDS = 60


def take(api_key: ApiKey) -> KeyLimit | None:
    """Count one request of `api_key` against its limit (settings.API_KEY_LIMITER); None for
    a key without one (only the global rates apply to it)."""
    limit = api_key.requests_per_minute()
    if not limit:
        return None
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    count = _count_in_cache(api_key.pk, window) if uses_redis() else None
    if count is None:
        count = _count_in_database(api_key.pk, window)
    return KeyLimit(
        limit=limit,
        remaining=max(0, limit - count),
        reset=max(1, math.ceil((window + 1) * WINDOW_SECONDS - now)),
        allowed=count <= limit,
    )


def _count_in_cache(key_id: int, window: int) -> int | None:
    """This request's number in the window, from Redis; None when Redis does not answer (the
    cache ignores its errors, so the pages keep working)."""
    name = f"key-limit:{key_id}:{window}"
    # Kept a window longer than it counts: a node whose clock is a little behind still finds it.
    cache.add(name, 0, timeout=2 * WINDOW_SECONDS)
    try:
        return cache.incr(name)
    except ValueError:  # gone between the two calls (flushed): counted from here
        return None


@retry_on_conflict
def _count_in_database(key_id: int, window: int) -> int:
    """This request's number in the window, from the key's ApiKeyWindow row."""
    rows = ApiKeyWindow.objects.filter(api_key_id=key_id, window=window)
    with transaction.atomic():
        if not rows.update(count=F("count") + 1):
            try:
                with transaction.atomic():
                    ApiKeyWindow.objects.create(api_key_id=key_id, window=window, count=1)
            except IntegrityError:  # another process made it first
                rows.update(count=F("count") + 1)
            else:
                # A new minute for this key: its windows before the previous one count no more.
                ApiKeyWindow.objects.filter(api_key_id=key_id, window__lt=window - 1).delete()
        return rows.values_list("count", flat=True).get()
