"""The double-entry journal: per-pool accounts and the transfers between them.

A transfer debits one account and credits another with a positive amount of cents and a code
saying why. A balance is credits minus debits, so a pool's balances always sum to zero. Transfers
are never updated or deleted (a PostgreSQL trigger refuses it): corrections are new transfers.
"""

from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce


class AccountKind(models.TextChoices):
    STAKES = "stakes", "Progressive stakes collected (negative: money taken in)"
    METER = "meter", "Jackpot meter"
    RESERVE = "reserve", "Reserve for the next reset"
    HOUSE = "house", "House"
    AWARDS_PENDING = "awards_pending", "Awards awaiting verification"
    PAYABLE = "payable", "Awards approved, owed to players"
    PAID = "paid", "Awards paid to players"
    ORPHAN = "orphan", "A stopped pool's liability owed to no pool: unclaimed progressive money"
    MOVED = "moved", "Liability moved between pools by a stop: + in the stopped pool, - in its heir"
    # The register of orphans (jackpot.pools.orphans): what its `orphan` account held, once final.
    FORFEIT = "forfeit", "Orphans final after their season: recoverable no more"


class TransferCode(models.TextChoices):
    POOL_SEED = "pool_seed", "Initial meter seed, funded by the house"
    CONTRIBUTION_METER = "contribution_meter", "Stake share to the meter"
    CONTRIBUTION_RESERVE = "contribution_reserve", "Stake share to the reserve"
    CONTRIBUTION_HOUSE = "contribution_house", "Stake share to the house"
    SUB_CENT_CARRY = "sub_cent_carry", "Sub-cent remainders the house held, released as a cent"
    VOID_REFUND = "void_refund", "Stakes of a voided round refunded by the house"
    JACKPOT_HIT = "jackpot_hit", "Jackpot won: the meter to the award"
    RESET_RESERVE = "reset_reserve", "Meter reset to the seed from the reserve"
    RESET_HOUSE = "reset_house", "Meter reset: the reserve's shortfall funded by the house"
    FIXED_AWARD = "fixed_award", "Fixed award paid by the house"
    ENVY = "envy", "Envy bonus paid by the house"
    AWARD_APPROVED = "award_approved", "Pending award approved for payment"
    AWARD_PAID = "award_paid", "Award paid to the player"
    AWARD_VOID_METER = "award_void_meter", "Voided jackpot back to the meter"
    AWARD_VOID_HOUSE = "award_void_house", "Voided fixed award back to the house"
    AWARD_VOID_PAYABLE = (
        "award_void_payable",
        "Approved award voided with the award it follows, back to the house",
    )
    VOID_RESET_RESERVE = "void_reset_reserve", "Voided jackpot: its reset back to the reserve"
    VOID_RESET_HOUSE = "void_reset_house", "Voided jackpot: its reset back to the house"
    STOP_METER_ORPHAN = "stop_meter_orphan", "Pool stopped: its meter to the orphan account"
    STOP_RESERVE_ORPHAN = "stop_reserve_orphan", "Pool stopped: its reserve to the orphan account"
    STOP_METER_OUT = "stop_meter_out", "Pool stopped: its meter moved to another pool"
    STOP_RESERVE_OUT = "stop_reserve_out", "Pool stopped: its reserve moved to another pool"
    STOP_METER_IN = "stop_meter_in", "A stopped pool's meter received on this pool's meter"
    STOP_RESERVE_IN = "stop_reserve_in", "A stopped pool's reserve received on this reserve"
    CORRECTION = "correction", "Correction by a new entry"
    REPLACE_SEED_BACK = "replace_seed_back", "Pool replaced: its start value back to the house"
    # The register of orphans (jackpot.pools.orphans, compliance 58).
    STOP_ORPHANS = "stop_orphans", "Pool stopped: its meter above the seed to the orphans"
    STOP_SEED_BACK = "stop_seed_back", "Pool stopped: the seed the house funded back to it"
    ORPHANS_OUT = "orphans_out", "Orphans recovered: out of the stopped pool's register"
    ORPHANS_IN = "orphans_in", "Orphans recovered: into this pool's meter"
    ORPHANS_FINAL = "orphans_final", "Orphans final after their season"


#: Codes a pool may receive more than once with no round nor award (one per pool stopped into it).
REPEATABLE_CODES = ("correction", "stop_meter_in", "stop_reserve_in", "orphans_in")


# The transfers that grant an award (its audit event is the award's birth certificate).
AWARD_GRANTED_BY = (TransferCode.JACKPOT_HIT, TransferCode.FIXED_AWARD, TransferCode.ENVY)


class Account(models.Model):
    pool = models.ForeignKey("jackpot.Pool", on_delete=models.PROTECT, related_name="accounts")
    kind = models.CharField(max_length=20, choices=AccountKind.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "kind"], name="account_one_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.pool_id}:{self.kind}"


class Transfer(models.Model):
    # No index of its own: the (pool, code) index and transfer_once_per_round_code_award lead
    # with the pool.
    pool = models.ForeignKey(
        "jackpot.Pool", on_delete=models.PROTECT, related_name="transfers", db_index=False
    )
    event = models.ForeignKey(
        "jackpot.AuditEvent", on_delete=models.PROTECT, related_name="transfers"
    )
    code = models.CharField(max_length=24, choices=TransferCode.choices)
    debit = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="debits")
    credit = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="credits")
    amount_cents = models.BigIntegerField()
    round = models.ForeignKey(
        "tables.Round", null=True, blank=True, on_delete=models.PROTECT, related_name="transfers"
    )
    # Indexed where it has one (`transfer_award`): most transfers are a round's stakes, and a
    # full index took an entry for each of them.
    award = models.ForeignKey(
        "jackpot.Award",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="transfers",
        db_index=False,
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount_cents__gt=0), name="transfer_positive"),
            models.CheckConstraint(condition=~Q(debit=F("credit")), name="transfer_two_accounts"),
            # A second transfer of one code for the same round and award is always a double
            # write (a stake taken twice, an award paid twice): the database refuses it. Only
            # corrections may repeat. Coalesce: NULL would make every row distinct.
            models.UniqueConstraint(
                F("pool"),
                F("code"),
                Coalesce(F("round"), Value(0)),
                Coalesce(F("award"), Value(0)),
                condition=~Q(code__in=REPEATABLE_CODES),
                name="transfer_once_per_round_code_award",
            ),
        ]
        indexes = [
            models.Index(fields=["pool", "code"]),
            models.Index(fields=["award"], condition=Q(award__isnull=False), name="transfer_award"),
        ]

    def __str__(self) -> str:
        return f"{self.code}: {self.amount_cents} cents {self.debit_id} -> {self.credit_id}"
