"""A real InnoDB deadlock with the product's transaction as its victim, once (issue #31).

Galera reports a certification conflict to the client as error 1213, the error an InnoDB deadlock
gives; a single MariaDB server can provoke the latter at will, with no mock. A second raw
connection, in a thread:

1. makes its own transaction heavy (rows inserted into a scratch table): InnoDB rolls back the
   lighter transaction of a deadlock, so the victim is the product's;
2. locks row B (`hold`) before the product's unit of work starts;
3. waits until the product's transaction waits (for B, having locked A);
4. asks for row A (`then`): a cycle, and the product's attempt fails with 1213;
5. gets A, commits, and lets the product's retry go on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

import MySQLdb
from django.db import connection

WEIGHT_TABLE = "galera_test_weight"
WEIGHT_ROWS = 500


class DeadlockOnce:
    def __init__(self, *, hold: tuple[str, list], then: tuple[str, list]):
        self.hold, self.then = hold, then
        self.held = threading.Event()
        self.error: BaseException | None = None
        self.cycle_closed = False
        self.thread = threading.Thread(target=self._run, name="deadlock-maker")

    def __enter__(self) -> DeadlockOnce:
        with connection.cursor() as cursor:
            cursor.execute("SELECT CONNECTION_ID()")
            (self.victim_id,) = cursor.fetchone()
        self.raw = MySQLdb.connect(**connection.get_connection_params())
        cursor = self.raw.cursor()
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {WEIGHT_TABLE} "
            "(id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB"
        )
        self.thread.start()
        if not self.held.wait(10):
            raise AssertionError(f"the second connection did not lock row B: {self.error!r}")
        return self

    def _run(self) -> None:
        cursor = self.raw.cursor()
        try:
            cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            cursor.execute("START TRANSACTION")
            cursor.executemany(
                f"INSERT INTO {WEIGHT_TABLE} (n) VALUES (%s)",  # noqa: S608
                [(n,) for n in range(WEIGHT_ROWS)],
            )
            cursor.execute(*self.hold)
            cursor.fetchall()
            self.held.set()
            deadline = time.monotonic() + 20
            while not self._victim_waits():
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"the product's transaction never waited for row B: {self._trx()}"
                    )
                time.sleep(0.01)
            self.cycle_closed = True
            cursor.execute(*self.then)  # waits until InnoDB rolls the product's attempt back
            cursor.fetchall()
            cursor.execute("COMMIT")
        except BaseException as exc:  # reported by __exit__
            self.error = exc
            self.held.set()
            self.raw.rollback()

    @staticmethod
    def _probe(*queries: tuple[str, list]) -> list:
        """The rows of `queries`, asked on a connection of their own (the others are busy)."""
        probe = MySQLdb.connect(**connection.get_connection_params())
        try:
            cursor = probe.cursor()
            rows: list = []
            for sql, params in queries:
                cursor.execute(sql, params)
                rows += cursor.fetchall()
            return rows
        finally:
            probe.close()

    def _victim_waits(self) -> bool:
        # A statement of the product's running this long, while the scratch table and row B
        # are all this connection holds, waits for B (information_schema.innodb_trx does not
        # always list a waiting transaction on MariaDB 10.11).
        ((count,),) = self._probe(
            (
                "SELECT COUNT(*) FROM information_schema.processlist "
                "WHERE id = %s AND command = 'Query' AND time_ms > 300",
                [self.victim_id],
            )
        )
        return count > 0

    def _trx(self) -> list:
        rows = self._probe(
            (
                "SELECT trx_mysql_thread_id, trx_state, trx_query "
                "FROM information_schema.innodb_trx",
                [],
            ),
            (
                "SELECT id, command, state, info FROM information_schema.processlist "
                "WHERE db = DATABASE()",
                [],
            ),
        )
        return [*rows, ("victim", self.victim_id)]

    def __exit__(self, *exc_info) -> None:
        self.thread.join(30)
        try:
            cursor = self.raw.cursor()
            cursor.execute(f"DROP TABLE IF EXISTS {WEIGHT_TABLE}")
        finally:
            self.raw.close()
        if exc_info[0] is None:
            assert self.error is None, f"the deadlock maker failed: {self.error!r}"
            assert self.cycle_closed


@contextlib.contextmanager
def lost_once(caplog, *, hold: tuple[str, list], then: tuple[str, list]) -> Iterator[None]:
    """The unit of work run inside loses one real deadlock (DeadlockOnce: `hold` is row B, `then`
    row A), and core.db logs exactly one retry of it."""
    with caplog.at_level(logging.WARNING, logger="core.db"), DeadlockOnce(hold=hold, then=then):
        yield
    retries = [r.getMessage() for r in caplog.records if r.name == "core.db"]
    assert len(retries) == 1 and retries[0].startswith(
        "certification conflict, retrying (attempt 2 of 5)"
    ), retries
