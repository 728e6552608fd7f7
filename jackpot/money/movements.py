"""The progressive's money movements: the one place that decides what moves where, and why.

Seed a pool, take a round's stakes, grant its awards (a royal wins and resets the jackpot), refund
a voided round, approve, pay or void an award. Each moves the pool's counters where it must
(`jackpot.money.meter`) and returns data: a typed result whose `postings` the caller records
(`jackpot.money.ledger`) under its own event, in the same transaction; a round's stakes and awards
come as an `Attempt`, which the step writes its event with, the pool row taken last (the technique
and its reasons: docs/accounting.md, "The pool row taken last"). It never calls back into the
caller, nor the sign. Callers never name an account or a transfer code (`accounting.ROUTES`).

Invariants (docs/accounting.md):
- a stake's cents all go somewhere named (the house's share one cent less, `sub_cent_carry`, when
  the counters crossed a cent more than the stakes brought);
- a round settles with the terms it opened with (`Terms`), never the pool's as they are now;
- a jackpot always waits for verification, another award from the round's threshold; an envy
  follows its jackpot (`Award.follows`), paid after it and voided with it;
- an award records what it shows of its round (`Dealt`) in the INSERT that grants it;
- award numbers follow the commit order (under the pool row), in seat order within a round;
- an `Attempt`'s event holds the values the pool row's statement returned, guessed or not: the
  same rows and hash either way;
- a documented correction moves the house against one liability (the meter, the reserve, or
  what an award not yet paid is owed), its counter by one relative statement;
- the metrics count a movement only once its transaction commits (`_count_after_commit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Generic, NoReturn, TypeVar

from django.db import connection, transaction

from core import metrics
from core.errors import Conflict
from jackpot.bodies.meter import Meter
from jackpot.models import (
    AccountKind,
    Award,
    AwardKind,
    AwardStatus,
    Pool,
    PoolStatus,
    Transfer,
    TransferCode,
)
from jackpot.money import ledger, meter, rows
from jackpot.money.accounting import Posting
from jackpot.money.locks import ChainSlot
from jackpot.money.meter import meter_body, pool_meter
from jackpot.notifications import big_wins
from rules.paytables import CURRENT, PaytableSet, get_progressive_paytable
from rules.progressive import ENVY, OwedAward, ProgressiveAward, fixed_award_cents


@dataclass(frozen=True, slots=True)
class Terms:
    """What a round of a pool is settled with: the pool's progressive stake, paytable version
    (what its sign promised) and verification threshold when the round opened."""

    stake_cents: int
    paytable_version: str
    verification_threshold_cents: int


#: The pool's fields its terms are read from (`pool_terms`).
TERMS_FIELDS = ("stake_cents", "paytable_version", "verification_threshold_cents")


def pool_terms(pool: Pool) -> Terms:
    """`pool`'s terms as it holds them: what a round opening now records."""
    return Terms(pool.stake_cents, pool.paytable_version, pool.verification_threshold_cents)


def paytables(terms: Terms) -> PaytableSet:
    """The paytables a round is settled and awarded with: its terms' progressive version, the
    box tables in force."""
    paytable = get_progressive_paytable(terms.paytable_version)
    if paytable.jackpot_percent_bp != 10_000:
        # domain.md: a jackpot royal wins the whole meter, which then resets to the seed. A
        # table paying a share would need rules for the rest that domain.md does not give.
        raise RuntimeError(f"paytable {paytable.version} does not pay the meter")
    if paytable is CURRENT.progressive:
        return CURRENT
    return PaytableSet(progressive=paytable)


def _meter_changed(
    pool: Pool, meter_cents: int, meter_version: int, now: datetime, status: str
) -> Meter:
    """The meter after a change, as the answer (and, after commit, the sign) shows it."""
    return meter_body(
        pool_id=pool.pk,
        currency=pool.currency,
        meter_cents=meter_cents,
        meter_version=meter_version,
        as_of=now,
        status=status,
    )


def refuse_unless_active(pool_id: int, *, param: str | None, doing: str) -> None:
    """409 `pool_suspended` (naming the suspension: its reason and since when) or `pool_stopped`
    when the pool is not active, as its row reads now (`jackpot.pools.lifecycle`); `doing` says what
    was refused."""
    found = Pool.objects.filter(pk=pool_id).values_list("status", "status_reason", "status_since")
    row = found.first()
    if row is None or row[0] == PoolStatus.ACTIVE:
        return
    status, reason, since = row
    when = since.isoformat() if since is not None else "?"
    if status == PoolStatus.SUSPENDED:
        raise Conflict(
            "pool_suspended",
            f"pool {pool_id} is suspended since {when} ({reason}): {doing}; nothing was written. "
            "It plays on without the progressive until an admin resumes it",
            param=param,
        )
    raise Conflict(
        "pool_stopped",
        f"pool {pool_id} was stopped for good on {when} ({reason}): {doing}; nothing was written",
        param=param,
    )


def _count_after_commit(count: Callable[[], None]) -> None:
    """Count a movement once its transaction commits; a metric that fails never fails the
    committed request (`robust`)."""
    transaction.on_commit(count, robust=True)


def _count_stakes(pool_id: int, stakes: int, stake_cents: int) -> None:
    pool = str(pool_id)
    metrics.STAKES.labels(pool).inc(stakes)
    metrics.STAKES_CENTS.labels(pool).inc(stakes * stake_cents)


def _count_awards(pool_id: int, awards: Sequence[tuple[str, int]]) -> None:
    pool = str(pool_id)
    for kind, amount_cents in awards:
        metrics.AWARDS.labels(pool, kind).inc()
        metrics.AWARDS_CENTS.labels(pool, kind).inc(amount_cents)
        if kind == AwardKind.ROYAL_FLUSH:
            metrics.JACKPOT_HITS.labels(pool).inc()


def seed_pool(*, seed_cents: int) -> tuple[Posting, ...]:
    """A new pool's first meter, funded by the house."""
    return (Posting(TransferCode.POOL_SEED, seed_cents),)


@dataclass(frozen=True, slots=True)
class StakesTaken:
    """A round's progressive stakes split into whole cents: meter + reserve + house = stakes."""

    stakes: int
    stake_cents: int
    meter_cents: int
    reserve_cents: int
    house_cents: (
        int  # negative (-1 at most) when the sub-cent remainders the house held make a cent
    )
    meter: Meter  # the meter after
    meter_version: int
    postings: tuple[Posting, ...]


def _refuse_stakes(pool: Pool, stake_cents: int) -> NoReturn:
    """The pool's row refused the stakes: 409 `pool_suspended` or `pool_stopped` when it is not
    active, else `stake_changed`."""
    refuse_unless_active(pool.pk, param="seats", doing="it takes no progressive stake")
    raise Conflict(
        "stake_changed",
        f"pool {pool.pk}'s progressive stake is no longer {stake_cents} cents; nothing was "
        "taken: read the pool and post the round again",
        param="seats",
    )


def _stakes_taken(
    pool: Pool, round_pk: int, stakes: int, stake_cents: int, split: meter.Split, now: datetime
) -> StakesTaken:
    """Where each cent of a contribution's `split` goes, and the meter after (no side effect:
    `_announce_stakes` tells the signs and the metrics once the split is the one written)."""
    postings = [Posting(TransferCode.CONTRIBUTION_METER, split.meter_cents, round_pk)]
    if split.house_cents >= 0:
        postings += [
            Posting(TransferCode.CONTRIBUTION_RESERVE, split.reserve_cents, round_pk),
            Posting(TransferCode.CONTRIBUTION_HOUSE, split.house_cents, round_pk),
        ]
    else:
        # The reserve crossed one more cent than the stakes had left: that cent is the sub-cent
        # remainders the house held so far, released now.
        carry = -split.house_cents
        postings += [
            Posting(TransferCode.CONTRIBUTION_RESERVE, split.reserve_cents - carry, round_pk),
            Posting(TransferCode.SUB_CENT_CARRY, carry, round_pk),
        ]
    body = meter_body(
        pool_id=pool.pk,
        currency=pool.currency,
        meter_cents=split.meter_after_cents,
        meter_version=split.meter_version,
        as_of=now,
        status="active",
    )
    return StakesTaken(
        stakes=stakes,
        stake_cents=stake_cents,
        meter_cents=split.meter_cents,
        reserve_cents=split.reserve_cents,
        house_cents=split.house_cents,
        meter=body,
        meter_version=split.meter_version,
        postings=tuple(postings),
    )


def _announce_stakes(pool: Pool, taken: StakesTaken) -> None:
    """The metrics count the stakes after commit."""
    stakes, stake_cents = taken.stakes, taken.stake_cents
    _count_after_commit(lambda: _count_stakes(pool.pk, stakes, stake_cents))


def take_stakes(
    *, pool: Pool, round_pk: int, stakes: int, stake_cents: int, now: datetime
) -> StakesTaken:
    """Raise the meter and the reserve by `stakes` stakes of `stake_cents`, the stake the round
    was validated and recorded with (the pool row lock, held to commit), and say where each cent
    went. A 409 `stake_changed` when the pool's stake changed since, `pool_suspended` or
    `pool_stopped` when the pool is no longer active (the row's own check, under its lock):
    nothing is taken."""
    split = meter.add_stakes(pool_id=pool.pk, stakes=stakes, stake_cents=stake_cents, now=now)
    if split is None:
        _refuse_stakes(pool, stake_cents)
    taken = _stakes_taken(pool, round_pk, stakes, stake_cents, split, now)
    _announce_stakes(pool, taken)
    return taken


class GuessOdds:
    """Whether a movement taken last (`take_stakes_last`, `grant_awards_last`) guesses before
    the pool row or takes the row first, per pool, from how its last guesses in this process
    fared: a pool with more than `MAX_WRONG` of about its last `WINDOW` guesses wrong goes to the
    row first, guessing once in `PROBE` (why: docs/accounting.md, "The pool row taken last").
    It orders the work, never what is written. Per process, without a lock: a race between two
    threads only loses a sample.
    """

    WINDOW = 8
    MAX_WRONG = 0.5
    PROBE = 8

    def __init__(self) -> None:
        self._wrong: dict[int, float] = {}
        self._skipped: dict[int, int] = {}

    def worth_it(self, pool_id: int) -> bool:
        if self._wrong.get(pool_id, 0.0) <= self.MAX_WRONG:
            return True
        skipped = self._skipped.get(pool_id, 0) + 1
        self._skipped[pool_id] = 0 if skipped >= self.PROBE else skipped
        return skipped >= self.PROBE

    def fared(self, pool_id: int, *, right: bool) -> None:
        wrong = self._wrong.get(pool_id, 0.0)
        self._wrong[pool_id] = wrong + ((0.0 if right else 1.0) - wrong) / self.WINDOW


GUESSES = GuessOdds()  # take_stakes_last's guesses at the counters
AWARD_GUESSES = GuessOdds()  # grant_awards_last's guesses at the award numbers

Moved = TypeVar("Moved", "StakesTaken", "AwardsGranted")


def _nothing() -> None:
    pass


@dataclass(frozen=True, slots=True)
class Guess(Generic[Moved]):
    """How an attempt built from values read without the pool row's lock is checked, and made
    again when they were wrong."""

    gate: ledger.Gate  # the statement that takes the pool row; keeps the event if it bears them out
    odds: GuessOdds
    again: Callable[[], Attempt[Moved]]  # the movement made with the pool row taken first
    savepoint: str | None = None  # taken before the guess's own writes, undone with them


@dataclass(frozen=True, slots=True)
class Attempt(Generic[Moved]):
    """One try at writing a movement (`moved`) with the step's audit event, the pool row last.

    The step builds its event, its answer and its rows from `moved`, and `record`s them. With a
    `guess`, `moved` was built from the pool as read without a lock, and the event is written
    behind the guess's gate; `record` is False, nothing of the attempt left, when the row did not
    bear it out, and the step builds again from `retake()`, the row taken first. Without one the
    row is held already and `record` is `ledger.record`. `kept` follows a kept event."""

    moved: Moved
    pool_id: int
    now: datetime
    guess: Guess[Moved] | None = None
    kept: Callable[[], None] = _nothing

    def record(
        self,
        *,
        chain: ChainSlot,
        kind: str,
        actor: str,
        payload: dict[str, Any],
        also: Sequence[rows.RowWrite] = (),
    ) -> bool:
        """Write the event with `moved`'s postings; whether it stayed written."""
        guess = self.guess
        write = ledger.record if guess is None else partial(ledger.record_gated, guess.gate)
        event = write(
            chain=chain,
            kind=kind,
            actor=actor,
            pool_id=self.pool_id,
            occurred_at=self.now,
            postings=self.moved.postings,
            payload=payload,
            also=also,
        )
        if guess is not None:
            guess.odds.fared(self.pool_id, right=event is not None)
        if event is not None:
            self.kept()
            return True
        assert guess is not None  # only a gate leaves nothing written
        # Moved by another table since (or refused as read): nothing of this attempt stays, nor
        # its after-commit work (Django drops what was registered since the savepoint).
        if guess.savepoint is not None:
            transaction.savepoint_rollback(guess.savepoint)
        pool = str(self.pool_id)
        _count_after_commit(lambda: metrics.POOL_ROW_RETAKEN.labels(pool).inc())
        return False

    def retake(self) -> Attempt[Moved]:
        """The movement made again, the pool row taken first (after a `record` that was False)."""
        assert self.guess is not None, "an attempt with the row held is never retaken"
        return self.guess.again()


def take_stakes_last(
    *, pool: Pool, round_pk: int, stakes: int, stake_cents: int, now: datetime
) -> Attempt[StakesTaken]:
    """`take_stakes`, the pool row taken last: the split guessed from the counters as read now
    (`meter.expected_stakes`), gated by the stakes' UPDATE at the version read
    (`meter.stakes_update`), which a wrong guess leaves unlocked. A refusal (a stale stake, a
    pool not active) is `take_stakes`', on the retake."""

    def row_first() -> Attempt[StakesTaken]:
        taken = take_stakes(
            pool=pool, round_pk=round_pk, stakes=stakes, stake_cents=stake_cents, now=now
        )
        return Attempt(taken, pool.pk, now)

    expected = (
        meter.expected_stakes(pool_id=pool.pk, stakes=stakes, stake_cents=stake_cents)
        if GUESSES.worth_it(pool.pk)
        else None
    )
    if expected is None:
        return row_first()
    split = meter.split_of(expected, stakes=stakes, stake_cents=stake_cents)
    taken = _stakes_taken(pool, round_pk, stakes, stake_cents, split, now)
    sql, params = meter.stakes_update(
        pool_id=pool.pk,
        stakes=stakes,
        stake_cents=stake_cents,
        now=now,
        at_version=expected[-1] - 1,  # the version read: the counters the guess is from
    )
    guess = Guess(ledger.Gate(sql, params, expected), GUESSES, row_first)
    return Attempt(taken, pool.pk, now, guess, partial(_announce_stakes, pool, taken))


@dataclass(frozen=True, slots=True)
class SeatHand:
    """A seat's hole cards as the terminal dealt them, and the best five its settlement was
    judged on (the rules engine's)."""

    cards: tuple[str, ...]
    best_five: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """What a round's awards show of it, recorded on each award at its grant: the table's key,
    name and game, the terminal's round id (`round_name`), the board and each seat's hand."""

    table_pk: int
    table_name: str
    game: str
    round_name: str
    board: tuple[str, ...]
    hands: Mapping[int, SeatHand]


@dataclass(frozen=True, slots=True)
class AwardsGranted:
    """A round's awards as created (amounts, statuses and numbers decided), their postings, and
    the meter after (reset when a seat won the jackpot: then `hit_meter_version` is its version)."""

    awards: tuple[Award, ...]
    postings: tuple[Posting, ...]
    meter: Meter
    hit_meter_version: int | None


def grant_awards(
    *,
    pool: Pool,
    terms: Terms,
    round_pk: int,
    dealt: Dealt,
    owed: Sequence[OwedAward],
    now: datetime,
) -> AwardsGranted:
    """Create the awards a round owes (`rules.progressive.round_awards`), winning the
    jackpot for a royal: each fixed award and envy from the round's `terms` (its paytable,
    waiting for a supervisor from its threshold), each with what it shows of the round
    (`dealt`: the table, the round id, its seat's cards, the board and the five cards that make
    it, none for an envy). Takes the pool row lock (award numbers) first, held to commit.

    A jackpot is never dropped: a royal on a meter under one cent raises `meter.ZeroJackpot`
    before the hit moves any counter, and the caller's transaction writes nothing. Only a fixed
    line a paytable sets at 0 cents is left out (it is no award)."""
    numbers = meter.next_award_numbers(pool_id=pool.pk, count=len(owed))
    hit: meter.JackpotTaken | None = None
    if any(item.kind == ProgressiveAward.ROYAL_FLUSH for item in owed):
        hit = meter.take_jackpot(pool_id=pool.pk, now=now)
    awards = _awards(pool, terms, round_pk, dealt, owed, now, numbers, hit)
    # An envy names the royal it follows (a CHECK): the royal is written first, for its id.
    leading = [award for award in awards if award.kind != AwardKind.ENVY]
    Award.objects.bulk_create(leading)
    royal = next((award for award in leading if award.kind == AwardKind.ROYAL_FLUSH), None)
    followers = [award for award in awards if award.kind == AwardKind.ENVY]
    for award in followers:
        assert royal is not None  # no envy without a jackpot (rules.progressive)
        award.follows = royal
    Award.objects.bulk_create(followers)
    postings = _granted(pool, round_pk, awards, hit)
    if hit is None:
        return AwardsGranted(tuple(awards), postings, pool_meter(pool_id=pool.pk), None)
    # A round opened before a suspension settles on its terms (compliance 48): its hit is won,
    # and the sign keeps saying the pool is suspended (read under the row lock the hit holds).
    status = Pool.objects.filter(pk=pool.pk).values_list("status", flat=True).get()
    body = _meter_changed(pool, hit.meter_after_cents, hit.meter_version, now, status)
    return AwardsGranted(tuple(awards), postings, body, hit.meter_version)


def grant_awards_last(
    *,
    pool: Pool,
    terms: Terms,
    round_pk: int,
    dealt: Dealt,
    owed: Sequence[OwedAward],
    now: datetime,
) -> Attempt[AwardsGranted]:
    """`grant_awards` and the big wins' notifications (`jackpot.notifications.big_wins`), the
    pool row taken last unless a seat won the jackpot (a jackpot's amount is the meter's).

    The award numbers are guessed (the ones after the pool's last, read without a lock:
    `meter.last_award_number`), with the awards' ids (`rows.next_ids`); their notifications are
    written after a savepoint, and the awards themselves by the gate, the statement that takes
    the numbers (`meter.award_numbers_update`), so every award is written under the pool row.
    On PostgreSQL only (elsewhere the gate would be more than one statement)."""

    def row_first() -> Attempt[AwardsGranted]:
        granted = grant_awards(
            pool=pool, terms=terms, round_pk=round_pk, dealt=dealt, owed=owed, now=now
        )
        return Attempt(granted, pool.pk, now, kept=partial(_notify, pool, dealt, granted.awards))

    royal = any(item.kind == ProgressiveAward.ROYAL_FLUSH for item in owed)
    if royal or not ledger.in_one_statement() or not AWARD_GUESSES.worth_it(pool.pk):
        return row_first()
    after = meter.last_award_number(pool_id=pool.pk)
    numbers = range(after + 1, after + len(owed) + 1)
    awards = _awards(pool, terms, round_pk, dealt, owed, now, numbers, None)
    for award, pk in zip(awards, rows.next_ids(Award, len(awards)), strict=True):
        award.pk = pk
    savepoint = transaction.savepoint()
    postings = _granted(pool, round_pk, awards, None)
    granted = AwardsGranted(tuple(awards), postings, pool_meter(pool_id=pool.pk), None)
    _notify(pool, dealt, awards)
    numbered, params = meter.award_numbers_update(pool_id=pool.pk, count=len(owed), after=after)
    fields = Award._meta.concrete_fields
    written, values = rows.insert_from(
        Award, [{f.attname: getattr(a, f.attname) for f in fields} for a in awards], "numbered"
    )
    gate = ledger.Gate(
        f"WITH numbered AS ({numbered}), awarded AS ({written})"
        " SELECT last_award_number FROM numbered",
        [*params, *values],
        (numbers[-1],),
        deferred=True,
    )
    guess = Guess(gate, AWARD_GUESSES, row_first, savepoint)
    return Attempt(granted, pool.pk, now, guess, partial(_saved, awards))


def _saved(awards: Sequence[Award]) -> None:
    """The awards the gate wrote, marked written as `bulk_create` leaves them."""
    for award in awards:
        award._state.adding = False


def _awards(
    pool: Pool,
    terms: Terms,
    round_pk: int,
    dealt: Dealt,
    owed: Sequence[OwedAward],
    now: datetime,
    numbers: range,
    hit: meter.JackpotTaken | None,
) -> list[Award]:
    """The award rows a round owes, numbered in `numbers` in the order owed (a jackpot's amount
    from its `hit`); a zero-cent fixed paytable line is no award (its number stays unused)."""
    paytable = paytables(terms).progressive
    awards: list[Award] = []
    for item, number in zip(owed, numbers, strict=True):
        jackpot = item.kind == ProgressiveAward.ROYAL_FLUSH
        if jackpot:
            assert hit is not None  # one royal a round (rules.progressive.round_awards)
            amount = hit.amount_cents
        elif item.kind == ENVY:
            amount = paytable.envy_cents
        else:
            amount = fixed_award_cents(ProgressiveAward(item.kind), paytable) or 0
        pending = jackpot or amount >= terms.verification_threshold_cents
        hand = dealt.hands[item.seat]
        awards.append(
            Award(
                pool=pool,
                round_id=round_pk,
                seat=item.seat,
                kind=AwardKind(item.kind),
                amount_cents=amount,
                status=AwardStatus.PENDING if pending else AwardStatus.APPROVED,
                number=number,
                created_at=now,
                table_pk=dealt.table_pk,
                table_name=dealt.table_name,
                game=dealt.game,
                round_name=dealt.round_name,
                hole_cards=list(hand.cards),
                board=list(dealt.board),
                # An envy is won by another seat's cards: its own make nothing.
                winning_five=[] if item.kind == ENVY else list(hand.best_five),
            )
        )
    # A jackpot is never 0 (meter.ZeroJackpot).
    return [a for a in awards if a.amount_cents > 0 or a.kind == AwardKind.ROYAL_FLUSH]


def _granted(
    pool: Pool, round_pk: int, awards: Sequence[Award], hit: meter.JackpotTaken | None
) -> tuple[Posting, ...]:
    """The written awards' postings; the metrics count them after commit."""
    counted = [(str(award.kind), award.amount_cents) for award in awards]
    _count_after_commit(lambda: _count_awards(pool.pk, counted))
    postings: list[Posting] = []
    for award in awards:
        pending = award.status == AwardStatus.PENDING
        ids = (round_pk, award.pk)
        if award.kind == AwardKind.ROYAL_FLUSH:
            assert hit is not None
            postings += [
                Posting(TransferCode.JACKPOT_HIT, award.amount_cents, *ids),  # always waits
                Posting(TransferCode.RESET_RESERVE, hit.reset_from_reserve_cents, *ids),
                Posting(TransferCode.RESET_HOUSE, hit.reset_from_house_cents, *ids),
            ]
        else:
            code = TransferCode.ENVY if award.kind == AwardKind.ENVY else TransferCode.FIXED_AWARD
            postings.append(Posting(code, award.amount_cents, *ids, pending))
    return tuple(postings)


def _notify(pool: Pool, dealt: Dealt, awards: Sequence[Award]) -> None:
    """The big wins' notifications, committed (or rolled back) with the awards: an INSERT into
    the outbox each, relayed after the commit (jackpot.notifications.outbox); none for a round
    without one."""
    big_wins.big_wins_enqueue(
        awards=awards, table_id=dealt.table_pk, round_id=dealt.round_name, currency=pool.currency
    )


def refund_stakes(*, round_pk: int, refund_cents: int) -> tuple[Posting, ...]:
    """A voided round's progressive stakes, refunded in full by the house. The meter and the
    reserve keep their shares: the meter never goes down but for a hit."""
    return (Posting(TransferCode.VOID_REFUND, refund_cents, round_pk),)


def approve_award(award: Award) -> tuple[Posting, ...]:
    """A verified award becomes payable to the player: what is due, its corrections included."""
    return (Posting(TransferCode.AWARD_APPROVED, award.due_cents, award.round_id, award.pk),)


def pay_award(award: Award) -> tuple[Posting, ...]:
    """The player has been paid what is due, its corrections included."""
    return (Posting(TransferCode.AWARD_PAID, award.due_cents, award.round_id, award.pk),)


def correction(
    account: AccountKind,
    amount_cents: int,
    *,
    round_pk: int | None = None,
    award_pk: int | None = None,
) -> Posting:
    """A documented correction of `account` by signed `amount_cents`: the house gives what raises
    it, and takes back what lowers it (`accounting.CORRECTION_ROUTES`)."""
    house = AccountKind.HOUSE
    route = (house, account) if amount_cents > 0 else (account, house)
    return Posting(TransferCode.CORRECTION, abs(amount_cents), round_pk, award_pk, route=route)


@dataclass(frozen=True, slots=True)
class Corrected:
    """A correction's postings and the pool's counters after it."""

    postings: tuple[Posting, ...]
    after: meter.Counters


def correct_counter(
    *, pool_id: int, target: str, amount_cents: int, now: datetime
) -> Corrected | None:
    """Raise or lower the pool's `meter` or `reserve` (`target`) by signed `amount_cents`, in one
    statement under the pool row (`meter.correct`); None, nothing changed, when the pool is
    stopped or the counter would go below zero."""
    on_meter = target == "meter"
    account = AccountKind.METER if on_meter else AccountKind.RESERVE
    after = meter.correct(
        pool_id=pool_id,
        meter_cents=amount_cents if on_meter else 0,
        reserve_cents=0 if on_meter else amount_cents,
        now=now,
    )
    if after is None:
        return None
    return Corrected((correction(account, amount_cents),), after)


def _owed_on(award: Award) -> AccountKind:
    """Where an award not yet paid is owed: pending (and verified) awards wait in
    `awards_pending`, approved ones in `payable`."""
    approved = award.status == AwardStatus.APPROVED
    return AccountKind.PAYABLE if approved else AccountKind.AWARDS_PENDING


def correct_award(award: Award, *, amount_cents: int) -> tuple[Posting, ...] | None:
    """Correct what is due on `award` (locked, not paid nor void) by signed `amount_cents`: its
    `corrected_cents` moved by one relative statement, the house giving or taking back the
    difference where the award is owed. None, nothing changed, when what is due would not stay
    above zero."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_award SET corrected_cents = corrected_cents + %s"
            " WHERE id = %s AND amount_cents + corrected_cents + %s > 0"
            " RETURNING corrected_cents",
            [amount_cents, award.pk, amount_cents],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    award.corrected_cents = int(row[0])
    posting = correction(_owed_on(award), amount_cents, round_pk=award.round_id, award_pk=award.pk)
    return (posting,)


def _corrections_back(award: Award) -> tuple[Posting, ...]:
    """A voided award's corrections, given back where they came from (none uncorrected)."""
    if award.corrected_cents == 0:
        return ()
    owed = _owed_on(award)
    return (correction(owed, -award.corrected_cents, round_pk=award.round_id, award_pk=award.pk),)


@dataclass(frozen=True, slots=True)
class AwardVoided:
    """A voided award's postings; for a jackpot, the meter it went back onto and the reset it
    gave back (to the reserve, to the house)."""

    postings: tuple[Posting, ...]
    meter_after_cents: int | None = None
    meter_version: int | None = None
    reset_reserve_cents: int = 0
    reset_house_cents: int = 0


def _hit_reset(award: Award) -> tuple[int, int]:
    """What the hit of jackpot `award` took to reset the meter, as its own transfers recorded it:
    (from the reserve, from the house). A zero part was never written, so it reads as zero."""
    written = dict(
        Transfer.objects.filter(
            pool_id=award.pool_id,
            award_id=award.pk,
            code__in=(TransferCode.RESET_RESERVE, TransferCode.RESET_HOUSE),
        ).values_list("code", "amount_cents")
    )
    return written.get(TransferCode.RESET_RESERVE, 0), written.get(TransferCode.RESET_HOUSE, 0)


def void_award(award: Award, *, now: datetime) -> AwardVoided:
    """Void an award awaiting payment. A fixed award or envy goes back to the house (an envy
    approved at once, voided with the jackpot it follows, from `payable`). A jackpot
    puts the link back where it would be had the hit never happened (domain.md): the jackpot back
    on the meter (`award_void_meter`), and the reset the hit paid back where it came from
    (`void_reset_reserve`, `void_reset_house`, the hit's own `reset_*` amounts), each a transfer
    referencing the award; the counters move in one statement under the pool row lock. Its
    documented corrections (`corrected_cents`) go back to the house by a `correction`. A 409
    `meter_would_go_negative`, nothing written, when the meter cannot give the reset back."""
    if award.kind != AwardKind.ROYAL_FLUSH:
        approved = award.status == AwardStatus.APPROVED
        code = TransferCode.AWARD_VOID_PAYABLE if approved else TransferCode.AWARD_VOID_HOUSE
        voided = Posting(code, award.amount_cents, award.round_id, award.pk)
        return AwardVoided((voided, *_corrections_back(award)))
    from_reserve, from_house = _hit_reset(award)
    moved = meter.void_jackpot(
        pool_id=award.pool_id,
        jackpot_cents=award.amount_cents,
        reset_reserve_cents=from_reserve,
        reset_house_cents=from_house,
        now=now,
    )
    if moved is None:
        raise Conflict(
            "meter_would_go_negative",
            f"voiding award {award.pk} would take its reset ({from_reserve + from_house} cents) "
            f"back from a meter holding less than that less its {award.amount_cents} cents: "
            "nothing was changed; see docs/accounting.md (voiding a jackpot)",
            param="award",
        )
    meter_cents, version = moved
    ids = (award.round_id, award.pk)
    postings = (
        Posting(TransferCode.AWARD_VOID_METER, award.amount_cents, *ids),
        Posting(TransferCode.VOID_RESET_RESERVE, from_reserve, *ids),
        Posting(TransferCode.VOID_RESET_HOUSE, from_house, *ids),
        *_corrections_back(award),
    )
    return AwardVoided(postings, meter_cents, version, from_reserve, from_house)
