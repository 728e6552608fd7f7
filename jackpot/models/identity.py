"""Which database this is: a random token made with the database, so that caches outside it (the
signs' display cache in Redis) can tell one life of the database from another.

One row (id 1), written by the migration that made the table, or at first use when it is missing
(a database emptied by `flush`). A database made anew has another token; a restored backup keeps
its token, so `jackpot.sign.display` adds what a restore changes (the database's OID, the server's
start time) to make its identity.
"""

import uuid

from django.db import models


class DatabaseIdentity(models.Model):
    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    token = models.UUIDField(default=uuid.uuid4)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(id=1), name="identity_one_row")]

    def __str__(self) -> str:
        return str(self.token)


class CommitProbe(models.Model):
    """A row per PostgreSQL backend that wrote one, bumped by `jackpot.money.rows.COMMIT_PROBE`: a
    statement that writes WAL, so that its transaction's COMMIT waits for the synchronous
    standby (a transaction that only reads, or only takes a transaction id, writes no commit
    record and waits for nothing). Used only where an answer must be durable before it is given
    (a replay, `tables.rounds.replay`) and while the standby was lately missing
    (`config.database`): rare, and one row per backend (pids are reused), so it stays small.
    Holds nothing anyone reads."""

    backend = models.IntegerField(primary_key=True)
    beats = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"backend {self.backend}: {self.beats}"
