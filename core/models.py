"""core's tables: only what every layer may share."""

from django.db import models


class Turn(models.Model):
    """One row per scope ("links.owner:42", "workspace:7:owners"…) whose writers must take
    turns, written by core.db.take_turn at the start of each such transaction.

    Why a row that is written rather than a row that is locked: on a MariaDB Galera cluster
    `SELECT … FOR UPDATE` locks rows on the local node only and is not certified, so two
    transactions on two nodes both pass it and both commit. A row a transaction *writes* is
    part of its write set: two transactions that both bump one scope's row conflict at commit
    (the later one fails with 1213 and core.db.retry_on_conflict runs it again, now seeing the
    winner's result), and on one node the UPDATE's row lock makes the second wait for the
    first, as FOR UPDATE did. `taken` only counts the turns taken: the write is the point.
    """

    scope = models.CharField(primary_key=True, max_length=100)
    taken = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name = "turn"

    def __str__(self) -> str:
        return f"{self.scope} ({self.taken})"
