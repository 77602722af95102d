"""The dead list's way back: visits refused by every flush (analytics.buffer.DEAD_KEY) stored
again once a fix lets them decode (`manage.py replay_dead_visits`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from analytics import buffer
from analytics.messages import decode_visits
from analytics.models import VisitRecord
from analytics.services.ingest import flush_pending
from analytics.services.rollups import _CHUNK
from core.redis_conn import redis_client


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
