"""The chart of transfers: which accounts each transfer code moves money between.

This table is the one place that names a debit and a credit. Writers say *why* money moves (a
`Posting`: a code, an amount, the round and award it belongs to, and whether the award waits
for verification); `jackpot.money.ledger` turns each posting into a transfer between the two
accounts the table gives. `docs/accounting.md` prints the same table, and a test keeps the two
equal.

Invariants: every code but `correction` has exactly one debit; the credit is fixed, except for
the awards that wait for a supervisor (`fixed_award`, `envy`), whose credit is `awards_pending`
instead of `payable`; debit and credit always differ. `correction` (`jackpot.pools.corrections`,
two people) has no one route but a set of pairs, `CORRECTION_ROUTES`: the house against the meter,
the reserve, an award pending or payable, both ways; its posting names its pair (`route`), and
`Posting.accounts` refuses any other pair, or a pair on any other code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from jackpot.models import AccountKind, TransferCode

_STAKES, _METER, _RESERVE, _HOUSE = (
    AccountKind.STAKES,
    AccountKind.METER,
    AccountKind.RESERVE,
    AccountKind.HOUSE,
)
_PENDING, _PAYABLE, _PAID = AccountKind.AWARDS_PENDING, AccountKind.PAYABLE, AccountKind.PAID
_ORPHAN, _MOVED = AccountKind.ORPHAN, AccountKind.MOVED
_FORFEIT = AccountKind.FORFEIT


@dataclass(frozen=True, slots=True)
class Route:
    """Where a transfer code moves money: `debit` -> `credit`, or -> `pending_credit` for an
    award that waits for verification (None: the code never waits)."""

    debit: AccountKind
    credit: AccountKind
    pending_credit: AccountKind | None = None


ROUTES: Mapping[TransferCode, Route] = MappingProxyType(
    {
        TransferCode.POOL_SEED: Route(_HOUSE, _METER),
        TransferCode.CONTRIBUTION_METER: Route(_STAKES, _METER),
        TransferCode.CONTRIBUTION_RESERVE: Route(_STAKES, _RESERVE),
        TransferCode.CONTRIBUTION_HOUSE: Route(_STAKES, _HOUSE),
        TransferCode.SUB_CENT_CARRY: Route(_HOUSE, _RESERVE),
        TransferCode.VOID_REFUND: Route(_HOUSE, _STAKES),
        TransferCode.JACKPOT_HIT: Route(_METER, _PENDING),
        TransferCode.RESET_RESERVE: Route(_RESERVE, _METER),
        TransferCode.RESET_HOUSE: Route(_HOUSE, _METER),
        TransferCode.FIXED_AWARD: Route(_HOUSE, _PAYABLE, pending_credit=_PENDING),
        TransferCode.ENVY: Route(_HOUSE, _PAYABLE, pending_credit=_PENDING),
        TransferCode.AWARD_APPROVED: Route(_PENDING, _PAYABLE),
        TransferCode.AWARD_PAID: Route(_PAYABLE, _PAID),
        TransferCode.AWARD_VOID_METER: Route(_PENDING, _METER),
        TransferCode.AWARD_VOID_HOUSE: Route(_PENDING, _HOUSE),
        # An award approved at once, voided with the award it follows (jackpot.awards.workflow).
        TransferCode.AWARD_VOID_PAYABLE: Route(_PAYABLE, _HOUSE),
        TransferCode.VOID_RESET_RESERVE: Route(_METER, _RESERVE),
        TransferCode.VOID_RESET_HOUSE: Route(_METER, _HOUSE),
        # A pool stopped for good (jackpot.pools.lifecycle): its meter and reserve go to its own
        # orphan account, or out through its `moved` account into another pool's `moved`, meter and
        # reserve (the two `moved` accounts sum to zero across the two pools).
        TransferCode.STOP_METER_ORPHAN: Route(_METER, _ORPHAN),
        TransferCode.STOP_RESERVE_ORPHAN: Route(_RESERVE, _ORPHAN),
        TransferCode.STOP_METER_OUT: Route(_METER, _MOVED),
        TransferCode.STOP_RESERVE_OUT: Route(_RESERVE, _MOVED),
        TransferCode.STOP_METER_IN: Route(_MOVED, _METER),
        TransferCode.STOP_RESERVE_IN: Route(_MOVED, _RESERVE),
        # A pool replaced (jackpot.pools.replacement): its start value back to the house; its
        # increment and reserve leave by `stop_meter_out`/`stop_reserve_out` into its heir.
        TransferCode.REPLACE_SEED_BACK: Route(_METER, _HOUSE),
        # The register of orphans (jackpot.pools.orphans, art. 66-4, docs/accounting.md "Orphans"):
        # a stop to orphans moves the meter above the seed and the reserve (`stop_reserve_orphan`)
        # to the pool's `orphan` account, the seed back to the house; two people recover the
        # orphans through `moved` into another pool's meter, or they become final (`forfeit`).
        TransferCode.STOP_ORPHANS: Route(_METER, _ORPHAN),
        TransferCode.STOP_SEED_BACK: Route(_METER, _HOUSE),
        TransferCode.ORPHANS_OUT: Route(_ORPHAN, _MOVED),
        TransferCode.ORPHANS_IN: Route(_MOVED, _METER),
        TransferCode.ORPHANS_FINAL: Route(_ORPHAN, _FORFEIT),
    }
)


#: The (debit, credit) pairs a `correction` may move between: the house always on one side, so a
#: correction's money is the house's to give or take back, never moved between two liabilities.
CORRECTION_ROUTES: frozenset[tuple[AccountKind, AccountKind]] = frozenset(
    pair
    for liability in (_METER, _RESERVE, _PENDING, _PAYABLE)
    for pair in ((_HOUSE, liability), (liability, _HOUSE))
)


@dataclass(frozen=True, slots=True)
class Posting:
    """A transfer to write: `amount_cents` under `code`, routed by `ROUTES`.

    `pending` is True for an award posted to wait for verification. A zero amount is dropped by
    the ledger (a reset the reserve covered whole writes no `reset_house`).
    """

    code: TransferCode
    amount_cents: int
    round_pk: int | None = None
    award_pk: int | None = None
    pending: bool = False
    # A correction's (debit, credit): one of `CORRECTION_ROUTES`; None for every other code.
    route: tuple[AccountKind, AccountKind] | None = None

    def accounts(self) -> tuple[AccountKind, AccountKind]:
        """(debit, credit) of this posting; ValueError for a code, a pair or a wait it cannot
        have."""
        if self.code == TransferCode.CORRECTION:
            if self.route not in CORRECTION_ROUTES or self.pending:
                raise ValueError(f"a correction moves between {self.route}: no such route")
            assert self.route is not None
            return self.route
        if self.route is not None:
            raise ValueError(f"transfer code {self.code} has its fixed route: it names none")
        route = ROUTES.get(self.code)
        if route is None:
            raise ValueError(f"transfer code {self.code} has no route: nothing may write it")
        if not self.pending:
            return route.debit, route.credit
        if route.pending_credit is None:
            raise ValueError(f"transfer code {self.code} never waits for verification")
        return route.debit, route.pending_credit
