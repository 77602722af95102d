"""Orphan visits: requests that reached no link (an unknown code, a short domain's bare root, a
host that is none of ours), counted so staff see what people and scanners ask for.

The 404 path only adds one to a counter in this process's memory (no I/O); a thread of the
process writes the counts to the database every ORPHAN_VISITS_FLUSH_SECONDS, adding them to the
hour's rows (OrphanVisitCount). Under a flood of made-up paths the number of distinct rows a
process keeps is bounded: past ORPHAN_VISITS_MAX_KEYS, further new paths of the hour are counted
under "(other paths)", so the totals stay exact while the detail is the first paths seen.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F

from analytics.models import OrphanKind, OrphanVisitCount
from core.db import retry_on_conflict

logger = logging.getLogger(__name__)

OTHER_PATHS = "(other paths)"
_PATH_LENGTH = OrphanVisitCount._meta.get_field("path").max_length
_REFERRER_LENGTH = OrphanVisitCount._meta.get_field("referrer").max_length

# (hour number, kind, host, path, referrer) → visits not written yet.
_counts: dict[tuple[int, str, str, str, str], int] = {}
_lock = threading.Lock()
_flusher: dict[str, threading.Thread | None] = {"thread": None}
os.register_at_fork(after_in_child=lambda: _flusher.update(thread=None))


def note_orphan(meta: Mapping[str, str], kind: str) -> None:
    """Count one request that reached no link (`meta`: the WSGI environ or request.META)."""
    host = (meta.get("HTTP_HOST") or "").lower().rsplit(":", 1)[0][:253]
    path = (meta.get("PATH_INFO") or "/")[:_PATH_LENGTH]
    referrer = (meta.get("HTTP_REFERER") or "")[:_REFERRER_LENGTH]
    key = (int(time.time()) // 3600, kind, host, path, referrer)
    with _lock:
        if key not in _counts and len(_counts) >= settings.ORPHAN_VISITS_MAX_KEYS:
            key = (key[0], kind, host, OTHER_PATHS, "")
        _counts[key] = _counts.get(key, 0) + 1
    if _flusher["thread"] is None and settings.ORPHAN_VISITS_FLUSH_SECONDS > 0:
        _start_flusher()


def _start_flusher() -> None:
    with _lock:
        if _flusher["thread"] is not None:
            return
        thread = threading.Thread(target=_flush_forever, name="orphan-visits", daemon=True)
        _flusher["thread"] = thread
    thread.start()


def _flush_forever() -> None:
    while True:
        time.sleep(settings.ORPHAN_VISITS_FLUSH_SECONDS)
        try:
            flush_orphans()
        except Exception:  # a thread that dies stops counting for good: log and go on
            logger.exception("Orphan visits could not be written; trying again")


def flush_orphans() -> int:
    """Add this process's counts to the database; returns how many rows it touched. Counts that
    could not be written (the database away) are kept for the next try."""
    with _lock:
        pending = dict(_counts)
        _counts.clear()
    try:
        for (hour, kind, host, path, referrer), count in pending.items():
            _add(hour, kind, host, path, referrer, count)
    except DatabaseError:
        with _lock:
            for key, count in pending.items():
                _counts[key] = _counts.get(key, 0) + count
        raise
    return len(pending)


@retry_on_conflict
def _add(hour: int, kind: str, host: str, path: str, referrer: str, count: int) -> None:
    moment = datetime.fromtimestamp(hour * 3600, tz=UTC)
    key = hashlib.sha1(
        "\n".join((kind, host, path, referrer)).encode(), usedforsecurity=False
    ).hexdigest()
    rows = OrphanVisitCount.objects.filter(hour=moment, key=key)
    if rows.update(count=F("count") + count):
        return
    try:
        with transaction.atomic():
            OrphanVisitCount.objects.create(
                hour=moment,
                key=key,
                kind=kind,
                host=host,
                path=path,
                referrer=referrer,
                count=count,
            )
    except IntegrityError:  # another process made the row meanwhile
        rows.update(count=F("count") + count)


def forget_counts() -> None:
    """Drop what this process counted and has not written (tests)."""
    with _lock:
        _counts.clear()


__all__ = ["OTHER_PATHS", "OrphanKind", "flush_orphans", "forget_counts", "note_orphan"]
