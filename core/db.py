"""Units of work that survive a write conflict: the one retry rule for database writes.

On a MariaDB Galera cluster any node takes writes, and row locks (SELECT … FOR UPDATE, an
UPDATE's) are only the local node's: two nodes can both pass them, and the transaction that
commits second fails at COMMIT with a certification conflict, which the client sees as MySQL
error 1213 (ER_LOCK_DEADLOCK, the same error a single server's InnoDB deadlock gives). Such a
transaction did nothing and may simply be run again. So may one that waited too long for a row
lock (1205) and one sent to a node that has left the cluster's primary component (1047, "WSREP
has not yet prepared node for application use": the connection is closed first, so the next
attempt may reach a node that works, through the load balancer).

`retry_on_conflict` makes a function such a unit: it runs in its own `transaction.atomic()` and
is run again, a few times at most, after a short jittered pause, each retry logged as
"certification conflict, retrying (attempt N of M)" (or the lock wait's or the node's reason).
Called inside an outer atomic block it is no unit of its own: a transaction cannot be retried
from inside (the server has already rolled all of it back), so it runs the function as it is
and a conflict goes up to the block's owner, which is the unit (or is not, and then the error
answers 503 through core.outages like any other).

What a retried attempt must not repeat or lose, the unit's body sees to:
- everything said to the outside waits for the commit (`transaction.on_commit`: webhooks,
  Celery tasks, cache and Redis writes), and a rolled-back attempt's callbacks are dropped;
- something taken from outside during the attempt that the rollback cannot give back (a code
  popped from the Redis pool) is given back by a callback registered with `on_rollback`.

Taking turns across nodes: a rule that needs one writer at a time ("one owner's creates take
turns", "owners change one at a time") cannot rest on SELECT … FOR UPDATE there, which only the
local node honours and Galera does not certify. `take_turn(scope)` writes the scope's row of
core.models.Turn instead: on one node the UPDATE's row lock makes the next taker wait, as FOR
UPDATE did; across nodes the two writes conflict at commit and the loser's unit is run again
(above), now seeing the winner's result.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import TypeVar

from django.db import (
    DEFAULT_DB_ALIAS,
    OperationalError,
    connections,
    models,
    transaction,
)
from django.db.transaction import TransactionManagementError

logger = logging.getLogger(__name__)

ER_LOCK_DEADLOCK = 1213  # also Galera's certification conflict (and a brute-force abort)
ER_LOCK_WAIT_TIMEOUT = 1205
ER_UNKNOWN_COM_ERROR = 1047  # Galera: the node is not in the primary component (not ready)

_REASONS = {
    ER_LOCK_DEADLOCK: "certification conflict",
    ER_LOCK_WAIT_TIMEOUT: "lock wait timeout",
    ER_UNKNOWN_COM_ERROR: "node not ready (WSREP)",
}

# What a unit of work is run again for; core.outages answers them 503 once the attempts are spent.
RETRIED_MYSQL_CODES = frozenset(_REASONS)

ATTEMPTS = 5  # in all, the first included
BACKOFF_SECONDS = 0.02  # doubled each retry, jittered (x0.5-1.5), at most MAX_BACKOFF_SECONDS
MAX_BACKOFF_SECONDS = 0.5
NOT_READY_PAUSE_SECONDS = 1.0  # a node rejoining the primary component takes a moment

F = TypeVar("F", bound=Callable)

_units = threading.local()


def conflict_code(exc: BaseException) -> int | None:
    """The MySQL error number of `exc` when it is one a unit of work may be run again for."""
    if not isinstance(exc, OperationalError) or not exc.args:
        return None
    code = exc.args[0]
    return code if isinstance(code, int) and code in RETRIED_MYSQL_CODES else None


def on_rollback(callback: Callable[[], None]) -> None:
    """Call `callback` if the running unit's attempt is rolled back (a conflict to retry, or any
    other error). Outside a unit (in a test's transaction, say) it is never called."""
    stack = getattr(_units, "stack", None)
    if stack:
        stack[-1].append(callback)


def _pause(code: int, attempt: int) -> float:
    backoff = min(BACKOFF_SECONDS * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS)
    seconds = backoff * random.uniform(0.5, 1.5)  # noqa: S311 (jitter, not a secret)
    if code == ER_UNKNOWN_COM_ERROR:
        seconds += NOT_READY_PAUSE_SECONDS
    return seconds


def _undo(callbacks: list[Callable[[], None]]) -> None:
    for callback in reversed(callbacks):
        try:
            callback()
        except Exception:
            logger.exception("Undoing a rolled-back attempt's %r failed", callback)


def retry_on_conflict(
    func: F | None = None,
    *,
    using: str = DEFAULT_DB_ALIAS,
    attempts: int = ATTEMPTS,
    atomic: bool = True,
) -> F | Callable[[F], F]:
    """Decorator: `func` becomes a unit of work retried on a write conflict (module doc).

    `@retry_on_conflict` or `@retry_on_conflict(attempts=3)`. `atomic=False`: `func` is one
    autocommitted statement (a conditional UPDATE on the redirect path), retried as it is
    without the round trips of a transaction around it.
    """

    def decorate(func: F) -> F:
        name = f"{func.__module__}.{func.__qualname__}"

        @functools.wraps(func)
        def unit(*args, **kwargs):
            connection = connections[using]
            if connection.in_atomic_block:
                return func(*args, **kwargs)  # the outer block is the unit (module doc)
            stack = _units.__dict__.setdefault("stack", [])
            for attempt in range(1, attempts + 1):
                undo: list[Callable[[], None]] = []
                stack.append(undo)
                try:
                    with transaction.atomic(using=using) if atomic else nullcontext():
                        return func(*args, **kwargs)
                except BaseException as exc:
                    _undo(undo)
                    code = conflict_code(exc)
                    if code is None or attempt == attempts:
                        raise
                    logger.warning(
                        "%s, retrying (attempt %d of %d): %s: %s",
                        _REASONS[code],
                        attempt + 1,
                        attempts,
                        name,
                        exc,
                    )
                    if code == ER_UNKNOWN_COM_ERROR:
                        connection.close()  # the next attempt connects again, maybe elsewhere
                    time.sleep(_pause(code, attempt))
                finally:
                    stack.pop()
            raise AssertionError("unreachable")  # pragma: no cover

        return unit  # type: ignore[return-value]

    return decorate(func) if func is not None else decorate


def take_turn(scope: str, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Wait for, and hold until the transaction ends, the turn of `scope` (e.g.
    f"links.owner:{user.pk}"): one transaction at a time per scope, on one node or across a
    Galera cluster's nodes (module doc). Call it first in the transaction, before reading what
    the turn protects and before locking anything else, so takers always lock in one order.

    One small write per call: `taken = taken + 1` on the scope's core.models.Turn row, a real
    change (an UPDATE that changed nothing would still lock the row here, but is no write for
    Galera to certify). The first taker of a scope inserts its row (a second inserting at once
    is ignored as a duplicate, then waits on the first one's row lock) and updates it too.
    SQLite: every transaction begins IMMEDIATE (settings), already one writer at a time; the
    row is written all the same.
    """
    from core.models import Turn  # here: the retry rule above needs no app registry

    if not connections[using].in_atomic_block:
        raise TransactionManagementError(
            f"take_turn({scope!r}) outside a transaction: the turn is held until the "
            "transaction ends, so it must be taken inside transaction.atomic() or a unit of work "
            "(retry_on_conflict)."
        )
    turns = Turn.objects.using(using).filter(scope=scope)
    if turns.update(taken=models.F("taken") + 1):
        return
    Turn.objects.using(using).bulk_create([Turn(scope=scope)], ignore_conflicts=True)
    if not turns.update(taken=models.F("taken") + 1):
        raise AssertionError(f"the turn row of {scope!r} is missing just after its insert")
