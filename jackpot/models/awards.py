"""Progressive awards: what a seat won, in the order of the hits.

`sequence` numbers a pool's awards in commit order (allocated under the pool's row lock), so the
order of jackpot hits across tables is the order of their sequence numbers.
"""

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
    APPROVED = "approved", "Approved for payment"
    PAID = "paid", "Paid"
    VOID = "void", "Void"


class Award(models.Model):
    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="awards")
    round = models.ForeignKey("tables.Round", on_delete=models.PROTECT, related_name="awards")
    seat = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20, choices=AwardKind.choices)
    amount_cents = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=AwardStatus.choices)
    sequence = models.BigIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "sequence"], name="award_sequence_unique"),
            models.UniqueConstraint(fields=["round", "seat", "kind"], name="award_once_per_seat"),
            models.CheckConstraint(condition=Q(amount_cents__gt=0), name="award_positive"),
            models.CheckConstraint(condition=Q(seat__gte=1, seat__lte=7), name="award_seat_range"),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.kind} {self.amount_cents} cents ({self.status})"
