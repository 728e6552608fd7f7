"""Progressive awards: what a seat won, in the order of the hits, and the way to payment.

`number` numbers a pool's awards in commit order (allocated under the pool's row lock), so the
order of jackpot hits across tables is the order of their numbers. (The wire and the journal's
payloads call it `sequence`, as they always have: docs/glossary.md.)

The way to payment (TigerBeetle's pending, then post or void): an award that needs a supervisor
starts `pending`; one supervisor verifies it (`verified`, with a note), a different one approves
payment (`approved`), then it is `paid`. A `pending` or `verified` award can be voided with a
reason: a fixed award or envy by one supervisor; a jackpot by two, one who requests the void (the
award keeps its status, marked `void_requested_by`, and can be neither verified nor approved until
the request is confirmed or cancelled) and a different one who confirms it. An award below the
threshold starts `approved`. An award that follows another (`follows`: an envy, its round's
jackpot) is approved or paid only once that one is approved, and is voided with it, whatever its
own status (`jackpot.awards.workflow`; compliance 53). Its payment records the method, a reference
and a note; the winner's identity, when given, is its own row (`jackpot.models.winners`). What it
shows of its round (table, game, the terminal's round id, cards, winning five) is its own, written
at the grant and never changed: nothing in the progressive follows `round` to the tables' rows to
show an award. The status is a projection: every step is an audit event, and every money
movement a transfer (`jackpot.awards.workflow`).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class AwardKind(models.TextChoices):
    ROYAL_FLUSH = "royal_flush", "Royal flush (jackpot)"
    COMMUNITY_ROYAL = "community_royal", "Community royal"
    STRAIGHT_FLUSH = "straight_flush", "Straight flush"
    FOUR_OF_A_KIND = "four_of_a_kind", "Four of a kind"
    FULL_HOUSE = "full_house", "Full house"
    ENVY = "envy", "Envy"


class AwardStatus(models.TextChoices):
    PENDING = "pending", "Awaiting verification"
    VERIFIED = "verified", "Verified, awaiting a second supervisor's approval"
    APPROVED = "approved", "Approved for payment"
    PAID = "paid", "Paid"
    VOID = "void", "Void"


class PaymentMethod(models.TextChoices):
    CASH = "cash", "Cash"
    CHEQUE = "cheque", "Cheque"
    BANK_TRANSFER = "bank_transfer", "Bank transfer"


class Award(models.Model):
    # No index of their own: award_number_unique leads with the pool, award_once_per_seat
    # with the round (an award is written under the pool's row: each index is in its hold).
    pool = models.ForeignKey(
        "jackpot.Pool", on_delete=models.PROTECT, related_name="awards", db_index=False
    )
    round = models.ForeignKey(
        "tables.Round", on_delete=models.PROTECT, related_name="awards", db_index=False
    )
    seat = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20, choices=AwardKind.choices)
    amount_cents = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=AwardStatus.choices)
    number = models.BigIntegerField()
    created_at = models.DateTimeField()
    # What the award shows of its round, recorded when it is granted (issue 23), so that the
    # progressive never reads the tables' rows to show or report an award: the table's key
    # (an integer, no foreign key: a column of the award's own), its name and game then, the
    # round's id as the terminal named it (`round_name`: `round_id` is the round's key), the
    # seat's hole cards, the board, and the five cards that make the award (none for envy).
    # Covered by the journal (the `round.settled` event's award entries, jackpot.audit.projections)
    # and never changed after the INSERT (a trigger, migration 0021). db_default: the raw
    # INSERTs that name only the older columns (tests, SQL tools) still work.
    table_pk = models.IntegerField(default=0, db_default=0)
    table_name = models.CharField(max_length=80, default="", db_default="")
    game = models.CharField(max_length=4, default="", db_default="")
    round_name = models.CharField(max_length=64, default="", db_default="")
    hole_cards = models.JSONField(default=list, db_default=[])
    board = models.JSONField(default=list, db_default=[])
    winning_five = models.JSONField(default=list, db_default=[])
    # The award this one follows (an envy: its round's jackpot, the royal that won it), set at
    # the grant and never changed (the trigger of migration 0024); covered by the journal (the
    # `round.settled` event's awards say which one is the royal, jackpot.audit.projections).
    follows = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="followers"
    )
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    verification_note = models.CharField(max_length=500, blank=True, default="")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    paid_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    paid_at = models.DateTimeField(null=True, blank=True)
    # How it was paid (the register's): the method, the cheque's or transfer's reference, a note;
    # the approver's note. Blank until the step that writes them.
    # db_default too: the round's one-statement insert (jackpot.money.rows) names only its columns.
    payment_method = models.CharField(
        max_length=20, choices=PaymentMethod.choices, blank=True, default="", db_default=""
    )
    payment_reference = models.CharField(max_length=100, blank=True, default="", db_default="")
    payment_note = models.CharField(max_length=500, blank=True, default="", db_default="")
    approval_note = models.CharField(max_length=500, blank=True, default="", db_default="")
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=500, blank=True, default="")
    # A jackpot's void takes two supervisors: one requests it (these three fields), another
    # confirms it (voided_by). A cancelled request clears them; the audit chain keeps it.
    void_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    void_requested_at = models.DateTimeField(null=True, blank=True)
    void_request_reason = models.CharField(max_length=500, blank=True, default="")
    # The sum of the award's documented corrections (`jackpot.pools.corrections`), signed cents:
    # what is approved and paid is `due_cents`. Written only by the correction's single-statement
    # UPDATE, in the transaction of its `pool.corrected` event (the verification sums them).
    corrected_cents = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "number"], name="award_number_unique"),
            models.UniqueConstraint(fields=["round", "seat", "kind"], name="award_once_per_seat"),
            models.CheckConstraint(condition=Q(amount_cents__gt=0), name="award_positive"),
            # A correction never takes an award to nothing or below (409 `award_due_not_positive`).
            models.CheckConstraint(
                condition=Q(amount_cents__gt=-models.F("corrected_cents")),
                name="award_due_positive",
            ),
            models.CheckConstraint(condition=Q(seat__gte=1, seat__lte=7), name="award_seat_range"),
            # An envy is owed because another seat of its round won the jackpot: it follows it.
            models.CheckConstraint(
                condition=Q(kind=AwardKind.ENVY, follows__isnull=False)
                | (~Q(kind=AwardKind.ENVY) & Q(follows__isnull=True)),
                name="award_envy_follows",
            ),
            # Four eyes, enforced by the database too: the approver is not the verifier.
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=models.F("verified_by")),
                name="award_four_eyes",
            ),
            # And for a jackpot's void: the supervisor who confirms is not the one who asked.
            models.CheckConstraint(
                condition=Q(void_requested_by__isnull=True)
                | ~Q(voided_by=models.F("void_requested_by")),
                name="award_void_four_eyes",
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"#{self.number} {self.kind} {self.due_cents} cents ({self.status})"

    @property
    def due_cents(self) -> int:
        """What the player is owed: the amount granted plus its documented corrections."""
        return self.amount_cents + self.corrected_cents
