"""Services mode with SHORTURL_LOCAL_REDIRECTS: visits a web process spooled (analytics.spool)
moved onto the Redis buffer (analytics.buffer), in batches. The node's runner does it every
NODE_SYNC_SECONDS; a conversion report whose click is not stored yet does it at once
(analytics.services.conversions). Imports no service, so both may use it."""

from __future__ import annotations

import logging

from django.conf import settings
from redis.exceptions import RedisError

from analytics import spool
from analytics.buffer import VISITS_KEY
from core.node_state import NodeLockBusy
from core.redis_conn import live_redis_client, redis_failed

logger = logging.getLogger(__name__)

# Messages per RPUSH when forwarding the spool: ~0.5 MB, one round trip.
FORWARD_BATCH = 2000
# Messages per forwarding run (every NODE_SYNC_SECONDS): a backlog drains in steps, so the
# runner's other jobs keep their rhythm.
FORWARD_LIMIT = 50_000


class NotReplicated(RedisError):
    """A pushed batch no replica confirmed: it stays in the spool and is pushed again (the
    copy already on the master is stored once, by event id)."""


def forward_spooled_visits(*, deadline: float | None = None) -> int:
    """Services mode, the node's runner: move spooled visits onto the Redis buffer in batches
    (one pipelined round trip per batch). Returns how many were forwarded.

    `deadline` (time.monotonic()): a caller answering a request (a conversion report) waits for
    the node's spool lock until then at most, and stops after the batch that passes it; the
    runner, which owns the work, passes none.

    A batch whose push fails stays in the spool (its offset is not saved) and is sent again
    next time; a batch pushed twice (the runner died before saving its offset) is stored once,
    by event id. With REDIS_WAIT_REPLICAS, a push counts only once that many replicas hold it:
    Redis copies to replicas after answering, so a master killed in between would take with it
    a batch the node had already let go of.
    """
    client = live_redis_client()
    if client is None:
        return 0
    replicas = settings.REDIS_WAIT_REPLICAS

    def push(lines: list[str]) -> None:
        pipe = client.pipeline(transaction=False)  # the push and its WAIT: one round trip
        pipe.rpush(VISITS_KEY, *(line.rstrip("\n") for line in lines))
        if replicas:
            pipe.execute_command("WAIT", replicas, settings.REDIS_WAIT_MS)
        held = pipe.execute()[-1]  # WAIT's answer; RPUSH's (a length) when none is asked
        if replicas and held < replicas:
            raise NotReplicated(
                f"{held} of {replicas} replica(s) acknowledged the batch within "
                f"{settings.REDIS_WAIT_MS} ms"
            )

    try:
        return spool.drain(push, batch_size=FORWARD_BATCH, limit=FORWARD_LIMIT, deadline=deadline)
    except NodeLockBusy:
        return 0  # the runner is forwarding them now
    except NotReplicated as exc:
        # Redis answers; only its replicas lag. Not an outage: nothing else pauses for it.
        logger.warning("Visits wait in the node's spool: %s", exc)
        return 0
    except RedisError as exc:
        redis_failed(exc, consequence="visits wait in the node's spool")
        return 0
