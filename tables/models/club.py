"""The club's sessions (séances), their snapshot and the drop boxes' counts (compliance 54).

A session is opened and closed by a supervisor, or closed at the club day's end. Its close takes,
from the journal alone, a snapshot: per table and pool the progressive stakes withheld (register
model 8), and per pool the meter the sign displayed (register model 8 ter). Each table's drop box
is then counted by one person and confirmed by another.

Invariants: at most one session is open (a partial unique index); the snapshot rows are written
with the `session.closed` event and never change (their triggers refuse UPDATE and DELETE); a
count is confirmed once, by another person, and its difference is counted minus expected. The
journal's events are the record: `tables.audit` compares every row here with them.
"""

from django.db import models
from django.db.models import F, Q

from tables.models.tables import Table


class SessionStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class ClosedBy(models.TextChoices):
    SUPERVISOR = "supervisor", "Closed by a supervisor"
    CLUB_DAY = "club_day", "Closed at the club day's end"


#: The partial unique index that keeps the club to one open session.
ONE_OPEN_SESSION = "club_session_one_open"


class ClubSession(models.Model):
    number = models.PositiveIntegerField(unique=True, help_text="1, 2, ... in opening order.")
    club_day = models.DateField(help_text="The club day it opened on (TIME_ZONE).")
    status = models.CharField(
        max_length=8, choices=SessionStatus.choices, default=SessionStatus.OPEN
    )
    opened_at = models.DateTimeField()
    opened_by = models.CharField(max_length=120, help_text="user:<name>")
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.CharField(
        max_length=120, blank=True, default="", help_text="user:<name>, or system:club_day"
    )
    closed_how = models.CharField(max_length=10, choices=ClosedBy.choices, blank=True, default="")
    # Where the session starts and ends in the journal: the head of each table and pool chain
    # (`{"table-3": 120, "pool-1": 88}`), as the `session.opened` and `session.closed` events
    # record them. A chain not named had no event yet (its start is 0).
    opened_heads = models.JSONField(default=dict)
    closed_heads = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["status"],
                condition=Q(status=SessionStatus.OPEN),
                name=ONE_OPEN_SESSION,
            ),
            models.CheckConstraint(
                condition=Q(status=SessionStatus.OPEN, closed_at__isnull=True)
                | Q(status=SessionStatus.CLOSED, closed_at__isnull=False),
                name="club_session_closed_has_time",
            ),
        ]
        indexes = [models.Index(fields=["club_day"], name="club_session_day")]

    def __str__(self) -> str:
        return f"session {self.number} ({self.club_day})"


class SessionTable(models.Model):
    """One line of register model 8: what a table withheld for a pool during a session.

    `stakes` progressive stakes were taken (`stakes_cents`, split as the rounds' events say into
    meter, reserve and house); `voided` rounds had their stakes refunded by a void within the
    session (`voided_cents`); `withheld_cents` is `stakes_cents - voided_cents`, what the box
    should hold.
    """

    session = models.ForeignKey(ClubSession, on_delete=models.PROTECT, related_name="tables")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="session_lines")
    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="+")
    rounds = models.BigIntegerField(help_text="Rounds opened with a progressive stake.")
    stakes = models.BigIntegerField()
    stakes_cents = models.BigIntegerField()
    meter_cents = models.BigIntegerField()
    reserve_cents = models.BigIntegerField()
    house_cents = models.BigIntegerField()
    voided = models.BigIntegerField()
    voided_cents = models.BigIntegerField()
    withheld_cents = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "table", "pool"], name="session_table_once"),
            models.CheckConstraint(
                condition=Q(withheld_cents=F("stakes_cents") - F("voided_cents")),
                name="session_table_withheld",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: table {self.table_id}, pool {self.pool_id}"


class SessionPool(models.Model):
    """One line of register model 8 ter: the amount a pool's sign displayed at the session's end,
    and the meter's corrections during the session (`corrections`, their signed sum)."""

    session = models.ForeignKey(ClubSession, on_delete=models.PROTECT, related_name="pools")
    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=10, help_text="The pool's status at the close.")
    displayed_cents = models.BigIntegerField(help_text="The meter shown at the close, cents.")
    meter_version = models.BigIntegerField()
    corrections = models.BigIntegerField(default=0)
    corrections_cents = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "pool"], name="session_pool_once"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: pool {self.pool_id}"


class DropCount(models.Model):
    """A table's drop box counted for a session: entered by one person, confirmed by another.

    `expected_cents` is what the session's snapshot says the table withheld (all its pools);
    `difference_cents` is `counted_cents - expected_cents`, set with the confirmation. A
    difference is recorded, never corrected: it is a significant event.
    """

    session = models.ForeignKey(ClubSession, on_delete=models.PROTECT, related_name="counts")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="drop_counts")
    counted_cents = models.BigIntegerField()
    counted_by = models.CharField(max_length=120)
    counted_at = models.DateTimeField()
    expected_cents = models.BigIntegerField()
    confirmed_by = models.CharField(max_length=120, blank=True, default="")
    confirmed_at = models.DateTimeField(null=True, blank=True)
    difference_cents = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "table"], name="drop_count_once"),
            models.CheckConstraint(condition=Q(counted_cents__gte=0), name="drop_count_nonneg"),
            models.CheckConstraint(
                condition=Q(confirmed_at__isnull=True, confirmed_by="", difference_cents=None)
                | (
                    Q(confirmed_at__isnull=False, difference_cents__isnull=False)
                    & ~Q(confirmed_by="")
                    & ~Q(confirmed_by=F("counted_by"))
                    & Q(difference_cents=F("counted_cents") - F("expected_cents"))
                ),
                name="drop_count_confirmed_by_another",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: table {self.table_id}, {self.counted_cents} cents"
