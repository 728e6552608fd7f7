"""A pool's reconciliation for auditors: balances, stakes, awards, hits, and the meter identity.

The meter identity recomputes the meter counter from first principles, independently of the
counter itself: every stake ever taken adds exactly `stake_cents * meter_share_bp` units (voided
rounds included: the meter keeps its share), and the only other movements are the seed and the
resets (in), voided jackpots (in), jackpots won (out) and the resets voided jackpots give back
(out), a stop's meter moved out (out) or a stopped pool's received (in), and the meter's
documented corrections (net, signed), all in whole cents. It
holds to the unit while the pool's stake and shares have not changed since its creation, which
the admin guarantees while tables are open.

The figures come from a verification's walk (`jackpot.audit.verification.VerificationReport.state`:
the newest checkpoint's, plus what was added since), never from a sum over the whole journal: the
balances, the transfers' totals by code and the live awards by kind. The stakes are counted from the
rounds' seats, which the tables own: the caller passes their count, the pool's rounds still open,
its latest integrity flags and the latest scheduled reconciliation's status
(`journal_pool_report` here is the journal's part; `tables.audit.verification.pool_report` is the
whole report, the one the API serves).
"""

from __future__ import annotations

from django.db.models import Q

from jackpot.audit.verification import CORRECTION, KINDS, VerificationReport
from jackpot.bodies.pools import (
    AwardTotal,
    IntegrityFlagBody,
    MeterIdentity,
    OpenRounds,
    PoolReport,
    ReconciliationStatus,
    ReportHit,
    StakeTotals,
)
from jackpot.models import (
    UNITS_PER_CENT,
    AccountKind,
    Award,
    AwardKind,
    AwardStatus,
    Pool,
)
from jackpot.models import TransferCode as Code

LAST_HITS = 25


def _hit(hit: Award) -> ReportHit:
    return ReportHit.model_construct(
        award=hit.pk,
        table=hit.table_name,
        round=hit.round_name,
        seat=hit.seat,
        amount_cents=hit.amount_cents,
        status=AwardStatus(hit.status),
        at=hit.created_at,
    )


def journal_pool_report(
    pool: Pool,
    *,
    found: VerificationReport,
    stakes_count: int,
    open_rounds: OpenRounds,
    integrity_flags: list[IntegrityFlagBody],
    reconciliation: ReconciliationStatus | None = None,
) -> PoolReport:
    """The reconciliation; `found` the walk it reads its figures from, in the snapshot `pool`
    was read in; `stakes_count` is every progressive stake the pool's tables ever took,
    voided rounds included; `open_rounds` the pool's rounds still open, as the tables count them;
    `integrity_flags` the latest flags the tables' integrity check stored for the pool;
    `reconciliation` the latest scheduled reconciliation's status (all pools at once)."""
    state = found.state
    balances = {**dict.fromkeys(KINDS, 0), **(state.balances.get(pool.pk, {}) if state else {})}
    by_code = state.codes.get(pool.pk, {}) if state else {}
    totals = (state.projections or {}).get("totals", {}) if state else {}
    live = totals.get(str(pool.pk), {}).get("live", {})

    cents_in = sum(
        by_code.get(code, 0)
        for code in (
            Code.POOL_SEED,
            Code.RESET_RESERVE,
            Code.RESET_HOUSE,
            Code.AWARD_VOID_METER,
            Code.STOP_METER_IN,
        )
    )
    cents_out = sum(
        by_code.get(code, 0)
        for code in (
            Code.JACKPOT_HIT,
            Code.VOID_RESET_RESERVE,
            Code.VOID_RESET_HOUSE,
            Code.STOP_METER_ORPHAN,
            Code.STOP_METER_OUT,
        )
    )
    # The meter's documented corrections, net (the walk keeps them by account: signed).
    cents_in += by_code.get(f"{CORRECTION}:{AccountKind.METER.value}", 0)
    expected_units = (cents_in - cents_out) * UNITS_PER_CENT + (
        stakes_count * pool.stake_cents * pool.meter_share_bp
    )
    awards = {
        kind: AwardTotal.model_construct(count=count, amount_cents=cents)
        for kind, (count, cents) in live.items()
    }
    hits = Award.objects.filter(~Q(status=AwardStatus.VOID), pool=pool, kind=AwardKind.ROYAL_FLUSH)
    return PoolReport.model_construct(
        pool=pool.pk,
        currency=pool.currency,
        meter_cents=pool.meter_cents,
        seed_cents=pool.seed_cents,
        reserve_cents=pool.reserve_units // UNITS_PER_CENT,
        house_cents=balances["house"],
        balances={AccountKind(kind): cents for kind, cents in balances.items()},
        stakes=StakeTotals.model_construct(
            count=stakes_count,
            in_cents=-balances["stakes"],
            refunded_cents=by_code.get(Code.VOID_REFUND, 0),
        ),
        awards_by_kind={
            kind: awards.get(kind.value) or AwardTotal.model_construct(count=0, amount_cents=0)
            for kind in AwardKind
        },
        hit_count=awards[AwardKind.ROYAL_FLUSH].count if AwardKind.ROYAL_FLUSH in awards else 0,
        last_hits=[_hit(hit) for hit in hits.order_by("-created_at", "-number")[:LAST_HITS]],
        meter_identity=MeterIdentity.model_construct(
            formula="units = (seed + resets + voided jackpots + meters received - jackpots won"
            " - voided jackpots' resets - meter stopped + meter corrections) x 10,000"
            " + stakes x stake_cents x meter_share_bp",
            expected_units=expected_units,
            meter_units=pool.meter_units,
            holds=expected_units == pool.meter_units
            and balances["meter"] == pool.meter_units // UNITS_PER_CENT,
        ),
        open_rounds=open_rounds,
        integrity_flags=integrity_flags,
        reconciliation=reconciliation,
    )
