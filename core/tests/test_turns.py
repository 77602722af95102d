"""core.db.take_turn: one transaction at a time per scope, by a row write Galera certifies.

What the tests here can show on one server: the turn is refused outside a transaction, its row is
made on first use and written by every turn (the write is what two Galera nodes' transactions
conflict on at commit), and a second transaction taking the same turn waits until the first has
committed, then sees what it committed. The cross-node conflict itself needs a real Galera
cluster: the drills prove it.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections, transaction
from django.db.transaction import TransactionManagementError

from core.db import take_turn
from core.models import Turn

pytestmark = pytest.mark.django_db(transaction=True)

WAITED = 0.5  # how long the second taker is watched while the first holds the turn


def test_a_turn_outside_a_transaction_is_refused():
    with pytest.raises(TransactionManagementError, match="outside a transaction"):
        take_turn("tests.outside")
    assert not Turn.objects.filter(scope="tests.outside").exists()


def test_a_turn_row_is_made_on_first_use_and_written_by_every_turn():
    with transaction.atomic():
        take_turn("tests.first")
    assert Turn.objects.get(scope="tests.first").taken == 1
    with transaction.atomic():
        take_turn("tests.first")
        take_turn("tests.other")
    assert dict(Turn.objects.values_list("scope", "taken")) == {
        "tests.first": 2,
        "tests.other": 1,
    }


def test_a_rolled_back_turn_leaves_no_row():
    with pytest.raises(RuntimeError), transaction.atomic():
        take_turn("tests.rolled-back")
        raise RuntimeError("rolled back")
    assert not Turn.objects.filter(scope="tests.rolled-back").exists()


@pytest.mark.parametrize("row", ["made by the first taker", "there already"])
def test_a_second_transaction_waits_for_the_first_to_commit(requires_mysql, row):
    """Two connections (the second in a thread): the second's take_turn returns only once the
    first has committed, and its transaction then reads the first one's write. With the row
    made by the first taker, the second's UPDATE finds the uncommitted insert and waits too."""
    scope = "tests.waits"
    if row == "there already":
        Turn.objects.create(scope=scope, taken=5)
    start = Turn.objects.filter(scope=scope).values_list("taken", flat=True).first() or 0
    first_done = threading.Event()
    second_started = threading.Event()
    seen: dict[str, object] = {}

    def second() -> None:
        try:
            with transaction.atomic():
                second_started.set()
                take_turn(scope)
                seen["after_first"] = first_done.is_set()
                seen["taken"] = Turn.objects.get(scope=scope).taken
        except BaseException as exc:  # reported below
            seen["error"] = exc
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=second, name="second-taker")
    with transaction.atomic():
        take_turn(scope)
        thread.start()
        assert second_started.wait(10)
        thread.join(WAITED)
        assert thread.is_alive(), f"the second taker did not wait: {seen}"
        assert _waits_for_a_lock(), "the second taker is not waiting for a row lock"
        first_done.set()
    thread.join(30)

    assert not thread.is_alive()
    assert "error" not in seen, seen["error"]
    assert seen == {"after_first": True, "taken": start + 2}
    assert Turn.objects.get(scope=scope).taken == start + 2


def _waits_for_a_lock() -> bool:
    """Another connection of this database runs a statement of the turn's (a lock wait: nothing
    else in the second taker's transaction takes time)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM information_schema.processlist "
            "WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command = 'Query' "
            "AND info LIKE %s",
            [f"%{Turn._meta.db_table}%"],
        )
        return cursor.fetchone()[0] > 0


def test_takers_of_other_scopes_do_not_wait(requires_mysql):
    done = threading.Event()

    def other() -> None:
        try:
            with transaction.atomic():
                take_turn("tests.scope-b")
            done.set()
        finally:
            connections.close_all()

    Turn.objects.create(scope="tests.scope-b")
    with transaction.atomic():
        take_turn("tests.scope-a")
        thread = threading.Thread(target=other, name="other-scope")
        started = time.monotonic()
        thread.start()
        assert done.wait(10), "a turn of another scope waited"
        assert time.monotonic() - started < 5
    thread.join(10)
