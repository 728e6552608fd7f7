"""The period-end liability: what the club owes on a pool at an instant, from the journal alone.

`pool_liability(pool, at=..., start=...)` reads, in one snapshot (on the standby when asked),
only the journal's transfers and events at or before `at`, never the hot counters: the meter,
reserve, awards pending and payable balances (`owed`), the seed in force, the period's awards
granted, paid and voided, and each chain's position.

Invariants:
- a past instant's statement is the same whenever it is asked (the journal is append-only);
- at `at` = now, meter and reserve equal the counters rounded down to the cent;
- the cost starts from the newest verified checkpoint at or before `at`, never the whole journal;
- the period's documented corrections are shown by account (`corrections`), and what a stop, a
  replacement, a recovery or final orphans moved across the owed figure (`life`): the owed figure
  at `at` is the one at `start` moved by the period's entries, these included.

The figures, the cost and what `at` cannot promise: docs/accounting.md, "The modules, in
detail".
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Max, Q, Sum

from core.codes import ErrorCode
from core.errors import ApiError, NotFound
from jackpot.audit import checkpoints
from jackpot.bodies.liability import (
    AwardFigure,
    ChainPosition,
    CorrectionFigures,
    Liability,
    LiabilityPeriod,
    LiabilityQuery,
    LifeFigures,
)
from jackpot.models import (
    AWARD_GRANTED_BY,
    Account,
    AccountKind,
    AuditChain,
    AuditEvent,
    Award,
    AwardStatus,
    Pool,
    Transfer,
)
from jackpot.models import TransferCode as Code
from jackpot.money import rows
from jackpot.money.ledger import pool_chain

_PAID = (Code.AWARD_PAID,)
_VOIDED = (Code.AWARD_VOID_METER, Code.AWARD_VOID_HOUSE, Code.AWARD_VOID_PAYABLE)
_SEED_KINDS = ("pool.created", "pool.changed")
#: The smallest step of a stored time: the instant just before `at`, in the month `at` ends.
_INSTANT = timedelta(microseconds=1)
#: The earliest `at` or `from` a statement is asked of: no journal holds anything earlier, and
#: a month's start in the club's zone is then never before year 1 (the dates' arithmetic fails
#: there: `at` = 0001-01-01T00:00:00Z was a 500).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def _not_before_earliest(moment: datetime, param: str) -> None:
    if moment < EARLIEST:
        raise ApiError(
            ErrorCode.INVALID_PARAMETER,
            f"{param}: {moment.isoformat()} is before {EARLIEST.isoformat()}, earlier than "
            "anything a journal holds",
            param=param,
        )


def _after(loaded: checkpoints.Loaded, chains: list[str], prefix: str = "") -> Q:
    """Events a checkpoint does not cover (every event without one): each chain's events past
    its position, from the first for a chain it did not know; `chains` every chain there is,
    `prefix` the path from the rows filtered to their event. Each arm is one range of the
    (chain, sequence) unique index: never a scan of the journal."""
    if loaded.state is None:
        return Q()
    positions = loaded.state.positions
    newer = Q(pk__in=[])
    for chain in chains:
        after = positions.get(chain, (0, ""))[0]
        newer |= Q(**{f"{prefix}chain": chain, f"{prefix}sequence__gt": after})
    return newer


def _balances(
    pool: Pool, at: datetime, loaded: checkpoints.Loaded, chains: list[str]
) -> dict[str, int]:
    """The pool's account balances at `at`: the checkpoint's, plus the transfers since."""
    balances = dict.fromkeys(AccountKind.values, 0)
    if loaded.state is not None:
        balances.update(loaded.state.balances.get(pool.pk, {}))
    kinds = dict(Account.objects.filter(pool=pool).values_list("pk", "kind"))
    newer = _after(loaded, chains, "event__")
    moved = (
        Transfer.objects.filter(newer, pool=pool, event__occurred_at__lte=at)
        .values_list("debit_id", "credit_id")
        .annotate(cents=Sum("amount_cents"))
        .order_by()
    )
    for debit, credit, cents in moved:
        balances[kinds[debit]] -= cents
        balances[kinds[credit]] += cents
    return balances


def _open_awards(pool: Pool, at: datetime) -> tuple[AwardFigure, AwardFigure]:
    """(pending, payable) at `at`, per award, from the transfers of the awards open then."""
    still_open = Q(status__in=[AwardStatus.PENDING, AwardStatus.VERIFIED, AwardStatus.APPROVED])
    still_open |= Q(status=AwardStatus.PAID, paid_at__gt=at)
    still_open |= Q(status=AwardStatus.VOID, voided_at__gt=at)
    candidates = Award.objects.filter(still_open, pool=pool, created_at__lte=at).values("pk")
    accounts = {
        kind: Account.objects.get(pool=pool, kind=kind).pk
        for kind in (AccountKind.AWARDS_PENDING, AccountKind.PAYABLE)
    }
    held: dict[AccountKind, dict[int, int]] = {kind: defaultdict(int) for kind in accounts}
    moved = (
        Transfer.objects.filter(award__in=candidates, event__occurred_at__lte=at)
        .values_list("award_id", "debit_id", "credit_id")
        .annotate(cents=Sum("amount_cents"))
        .order_by()
    )
    for award, debit, credit, cents in moved:
        for kind, account in accounts.items():
            held[kind][award] += cents * ((credit == account) - (debit == account))
    pending, payable = (
        [cents for cents in held[kind].values() if cents]
        for kind in (AccountKind.AWARDS_PENDING, AccountKind.PAYABLE)
    )
    return (
        AwardFigure.model_construct(count=len(pending), amount_cents=sum(pending)),
        AwardFigure.model_construct(count=len(payable), amount_cents=sum(payable)),
    )


def _moved(pool: Pool, codes: tuple[str, ...], start: datetime, end: datetime) -> AwardFigure:
    found = Transfer.objects.filter(
        pool=pool, code__in=codes, event__occurred_at__gte=start, event__occurred_at__lt=end
    ).aggregate(count=Count("award", distinct=True), cents=Sum("amount_cents"))
    return AwardFigure.model_construct(count=found["count"], amount_cents=found["cents"] or 0)


#: A correction's net figure by the account it moved (the house apart).
_CORRECTED = {
    AccountKind.METER: "meter_cents",
    AccountKind.RESERVE: "reserve_cents",
    AccountKind.AWARDS_PENDING: "pending_cents",
    AccountKind.PAYABLE: "payable_cents",
}


def _corrections(pool: Pool, start: datetime, end: datetime) -> CorrectionFigures:
    """The period's `correction` transfers, net by account (the (pool, code) index: the range
    costs the pool's corrections, never the journal)."""
    found = Transfer.objects.filter(
        pool=pool,
        code=Code.CORRECTION,
        event__occurred_at__gte=start,
        event__occurred_at__lt=end,
    )
    figures = dict.fromkeys(_CORRECTED.values(), 0)
    moved = (
        found.values_list("debit__kind", "credit__kind")
        .annotate(cents=Sum("amount_cents"))
        .order_by()
    )
    for debit, credit, cents in moved:
        if credit in _CORRECTED:
            figures[_CORRECTED[credit]] += cents
        if debit in _CORRECTED:
            figures[_CORRECTED[debit]] -= cents
    return CorrectionFigures.model_construct(
        count=found.values("event").distinct().count(),
        meter_cents=figures["meter_cents"],
        reserve_cents=figures["reserve_cents"],
        pending_cents=figures["pending_cents"],
        payable_cents=figures["payable_cents"],
    )


#: What a pool's life moved across the owed figure, by `LifeFigures` field: every code that moves
#: the pool's meter, reserve or `orphan` account to or from the house, `moved` or `forfeit`
#: (jackpot.money.accounting.ROUTES) but the stakes', the awards' and the corrections'.
_LIFE = {
    "seed_back_cents": (Code.STOP_SEED_BACK, Code.REPLACE_SEED_BACK),
    "moved_out_cents": (Code.STOP_METER_OUT, Code.STOP_RESERVE_OUT, Code.ORPHANS_OUT),
    "moved_in_cents": (Code.STOP_METER_IN, Code.STOP_RESERVE_IN, Code.ORPHANS_IN),
    "orphans_final_cents": (Code.ORPHANS_FINAL,),
}
_LIFE_FIGURE = {code: figure for figure, codes in _LIFE.items() for code in codes}


def _life(pool: Pool, start: datetime, end: datetime) -> LifeFigures:
    """The period's transfers of the `_LIFE` codes, summed by figure (the (pool, code) index:
    the range costs the pool's stops and recoveries, never the journal)."""
    figures = dict.fromkeys(_LIFE, 0)
    moved = (
        Transfer.objects.filter(
            pool=pool,
            code__in=list(_LIFE_FIGURE),
            event__occurred_at__gte=start,
            event__occurred_at__lt=end,
        )
        .values_list("code")
        .annotate(cents=Sum("amount_cents"))
        .order_by()
    )
    for code, cents in moved:
        figures[_LIFE_FIGURE[code]] += cents
    return LifeFigures.model_construct(
        seed_back_cents=figures["seed_back_cents"],
        moved_out_cents=figures["moved_out_cents"],
        moved_in_cents=figures["moved_in_cents"],
        orphans_final_cents=figures["orphans_final_cents"],
    )


def _seed(pool: Pool, at: datetime) -> int:
    """The seed in force at `at`: the last event of the pool's chain that set it by then."""
    events = AuditEvent.objects.filter(
        chain=pool_chain(pool.pk), kind__in=_SEED_KINDS, occurred_at__lte=at
    ).order_by("-sequence")
    for event in events.iterator():
        payload = event.payload if isinstance(event.payload, dict) else {}
        values = payload.get("after", {}) if event.kind == "pool.changed" else payload
        if isinstance(values, dict) and isinstance(values.get("seed_cents"), int):
            return int(values["seed_cents"])
    return pool.seed_cents  # no event by then: the pool did not exist yet, its seed as created


def _positions(at: datetime, loaded: checkpoints.Loaded, chains: list[str]) -> list[ChainPosition]:
    """Per chain, its last event at or before `at`: past the checkpoint's position when one is
    there, else the checkpoint's own."""
    known = dict(loaded.state.positions) if loaded.state else {}
    newest = dict(
        AuditEvent.objects.filter(_after(loaded, chains), occurred_at__lte=at)
        .values_list("chain")
        .annotate(last=Max("sequence"))
        .order_by()
    )
    wanted = Q(pk__in=[])
    for chain, sequence in newest.items():
        wanted |= Q(chain=chain, sequence=sequence)
    hashes = {
        chain: (sequence, digest)
        for chain, sequence, digest in AuditEvent.objects.filter(wanted).values_list(
            "chain", "sequence", "hash"
        )
    }
    found = {chain: place for chain, place in known.items() if place[0] > 0} | hashes
    return [
        ChainPosition.model_construct(chain=chain, sequence=sequence, hash=digest)
        for chain, (sequence, digest) in sorted(found.items())
    ]


#: The transfers a stop writes on the stopped pool: one of them at or before `at` says it was
#: stopped then.
_STOPPED_BY = (
    Code.STOP_METER_ORPHAN,
    Code.STOP_RESERVE_ORPHAN,
    Code.STOP_METER_OUT,
    Code.STOP_RESERVE_OUT,
    Code.STOP_ORPHANS,
    Code.STOP_SEED_BACK,
)


def _stopped(pool: Pool, at: datetime) -> bool:
    """Whether the journal had stopped `pool` by `at`: a stop's transfer (the (pool, code)
    index). A stop that moved nothing writes none, and shows its meter of 0 against the seed."""
    return Transfer.objects.filter(
        pool=pool, code__in=_STOPPED_BY, event__occurred_at__lte=at
    ).exists()


def pool_liability(pool: Pool, *, at: datetime, start: datetime) -> Liability:
    """The statement of `pool` at `at` with its period [`start`, `at`): see the module."""
    with rows.snapshot():
        loaded = checkpoints.at_or_before(at)
        chains = list(AuditChain.objects.order_by("key").values_list("key", flat=True))
        balances = _balances(pool, at, loaded, chains)
        pending, payable = _open_awards(pool, at)
        seed = _seed(pool, at)
        period = LiabilityPeriod.model_construct(
            start=start,
            end=at,
            granted=_moved(pool, AWARD_GRANTED_BY, start, at),
            jackpots=_moved(pool, (Code.JACKPOT_HIT,), start, at),
            paid=_moved(pool, _PAID, start, at),
            voided=_moved(pool, _VOIDED, start, at),
            corrections=_corrections(pool, start, at),
            life=_life(pool, start, at),
        )
        journal = _positions(at, loaded, chains)
    meter, reserve = balances[AccountKind.METER], balances[AccountKind.RESERVE]
    orphans = balances[AccountKind.ORPHAN]
    stopped = _stopped(pool, at)
    return Liability.model_construct(
        pool=pool.pk,
        pool_name=pool.name,
        currency=pool.currency,
        at=at,
        meter_cents=meter,
        seed_cents=seed,
        meter_above_seed_cents=0 if stopped else meter - seed,
        stopped=stopped,
        orphans_cents=orphans,
        reserve_cents=reserve,
        pending=pending,
        payable=payable,
        owed_cents=meter + reserve + pending.amount_cents + payable.amount_cents + orphans,
        period=period,
        journal=journal,
        checkpoint=loaded.checkpoint.pk if loaded.checkpoint else None,
    )


def statement_period(query: LiabilityQuery, *, now: datetime) -> tuple[datetime, datetime]:
    """(at, start) in UTC for `query`: `at` defaults to `now` and may not be later; `start`
    defaults to midnight of the first day of the month `at` ends in, in the club's time zone
    (settings.TIME_ZONE): `at`'s own month, or the month it closes when `at` is midnight of a
    1st (a month's close, for which `at`'s month would be an empty period); it may not be later
    than `at`; neither is before `EARLIEST`. `invalid_parameter` naming the one that is wrong."""
    at = now if query.at is None else query.at
    _not_before_earliest(at, "at")
    if query.from_ is not None:
        _not_before_earliest(query.from_, "from")
    if at > now:
        raise ApiError(
            ErrorCode.INVALID_PARAMETER,
            f"at: {at.isoformat()} is in the future: a statement is of what the journal holds",
            param="at",
        )
    if query.from_ is None:
        club = ZoneInfo(settings.TIME_ZONE)
        first = (at - _INSTANT).astimezone(club).date().replace(day=1)
        start = datetime.combine(first, time(0), tzinfo=club)
    else:
        start = query.from_
    if start > at:
        raise ApiError(
            ErrorCode.INVALID_PARAMETER,
            f"from: {start.isoformat()} is later than at ({at.isoformat()})",
            param="from",
        )
    return at.astimezone(UTC), start.astimezone(UTC)


def liability_statement(pool_id: int, query: LiabilityQuery, *, now: datetime) -> Liability:
    """The statement `query` asks for of pool `pool_id` (`pool_not_found` without one)."""
    at, start = statement_period(query, now=now)
    pool = Pool.objects.filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(ErrorCode.POOL_NOT_FOUND, f"no pool {pool_id}", param="pool")
    return pool_liability(pool, at=at, start=start)
