"""Reconciliation on a schedule (compliance requirement 4): every pool recomputed from the journal,
the chains verified, the meter identity checked, a report stored, and an alert on any difference.

`reconcile()` runs, in one consistent snapshot (REPEATABLE READ, read only, with the worker's
5-minute statement timeout):
1. the journal check (`jackpot.audit.verification`, crossed with the rounds by
`tables.audit.verification`):
   the scheduled run is routine, from the newest checkpoint (it costs what was added since: about
   5 minutes of play), the daily run is full, from the first event: every chain's links and
   head, the chains allowed to move each pool's money, the awards and pools against what the
   chains say of them, per pool the balances summing to zero, the meter and reserve counters
   equal to their accounts, the award accounts equal to the awards, the stakes equal to the
   rounds'; with JOURNAL_ANCHOR_DIR set, also every anchored chain head (an anchor file that
   cannot be read, or none in the directory, is a problem too);
2. per pool, the meter identity as the pool report states it (`jackpot.reporting.reports`): seed,
resets
   and voided jackpots in, jackpots won and voided jackpots' resets out, plus every stake times
   the stake and meter share, equal to the meter counter to the unit. The identity assumes the
   pool's stake and meter share never changed: for a pool with an applied parameter change of
   either, it is shown (`identity: "not_applicable"`) and is not a problem; the journal's own
   checks above still hold the meter to the ledger;
3. a check that itself breaks (a journal edited so badly that reading it raises, a statement
   cancelled by the timeout) is a failed run, its error the problem.

A passing run stores its checkpoint (`tables.audit.verification.keep_checkpoint`) and every run its
record (`tables.audit.verification_jobs`: the daily one a job begun before it walks, its progress
shown like a full run asked for over the API). Then one transaction stores the report
(`tables.models.Reconciliation`, written once, whole) and, for a failed run, `raise_alert`: a
`reconciliation.failed` event on the `admin` chain (a security kind: also in the security log), and
a log line at ERROR. A run that is ok after a failed one writes `reconciliation.recovered`
(`announce_recovery`). "After a failed one" is the report
stored just before it: reports are stored under this module's transaction-level advisory lock
(taken by nothing else, before the `admin` chain's head: jackpot.money.locks), so two runs finishing
at once cannot both see the same previous report.

Idempotent: a scheduled run has a `run_key` (the beat task's id for the periodic run, the UTC
date for the daily one, `tables.tasks`), unique in the table. A run whose key already has a
report stores nothing and returns that report; two deliveries racing store one (the second
insert waits on the unique index, then finds the first).

Nothing here moves money; the report's table is read and append only (jackpot.audit.grants).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from jackpot.audit.anchors import Anchor, read_anchors
from jackpot.audit.verification import Progress, VerificationReport
from jackpot.models import ChangeStatus, ParameterChange, Pool, VerificationTrigger
from jackpot.money import ledger, locks, rows
from tables.audit.verification import keep_checkpoint, pool_report, verify_full, verify_routine
from tables.audit.verification_jobs import begin, record
from tables.models import Reconciliation

logger = logging.getLogger(__name__)

ACTOR = "system:reconciliation"
FAILED = "reconciliation.failed"
RECOVERED = "reconciliation.recovered"
#: How many problems an alert's event names (the report keeps up to Reconciliation.PROBLEMS_KEPT).
ALERT_PROBLEMS = 5
#: As long as the worker's own statement_timeout (deploy/systemd/jackpot-worker.service): a run
#: started by hand (`manage.py reconcile`) is not cut short by the requests' 1.5 s.
_STATEMENT_TIMEOUT_MS = 300_000
#: Parameters whose change makes the meter identity (every stake x today's stake and share) moot.
_IDENTITY_PARAMETERS = ["stake_cents", "meter_share_bp"]


@dataclass
class Findings:
    """What a run found, before it is stored."""

    report: VerificationReport
    anchors: int = 0
    pools: list[dict[str, Any]] = field(default_factory=list)


def _identity_applies(pool: Pool) -> bool:
    return not ParameterChange.objects.filter(
        pool=pool, status=ChangeStatus.APPLIED, changes__has_any_keys=_IDENTITY_PARAMETERS
    ).exists()


def _pool_figures(pool: Pool, report: VerificationReport) -> dict[str, Any]:
    """The pool's figures as the run found them; a broken meter identity is a problem."""
    identity = pool_report(pool, report).meter_identity
    applies = _identity_applies(pool)
    if applies and not identity.holds:
        report.fail(
            f"pool {pool.pk}: meter identity: {identity.expected_units} units expected"
            f" ({identity.formula}), the meter holds {identity.meter_units}"
        )
    return {
        "pool": pool.pk,
        "meter_cents": pool.meter_cents,
        "meter_units": identity.meter_units,
        "expected_units": identity.expected_units,
        "identity": ("holds" if identity.holds else "broken") if applies else "not_applicable",
        "balances": report.balances.get(pool.pk, {}),
    }


def _anchors() -> tuple[list[Anchor], list[str]]:
    """The anchor files of JOURNAL_ANCHOR_DIR, and what is wrong with them: a file the worker
    cannot read is a problem of the run, never a crash that would store no report."""
    if not settings.JOURNAL_ANCHOR_DIR:
        return [], []
    directory = Path(settings.JOURNAL_ANCHOR_DIR)
    try:
        anchors, unreadable = read_anchors(directory)
    except OSError as error:
        return [], [f"anchors: {directory} could not be read: {error}"]
    return anchors, [problem.message for problem in unreadable]


def check(*, full: bool = False, progress: Progress | None = None) -> Findings:
    """Run every check (the module's docstring) in one snapshot, from the first event (`full`)
    or from the newest checkpoint; reads only."""
    anchors, unreadable = _anchors()
    try:
        # The journal's check and the pools' identities after it, in one snapshot.
        with rows.snapshot(statement_timeout_ms=_STATEMENT_TIMEOUT_MS):
            report = verify_full(anchors, progress=progress) if full else verify_routine(anchors)
            findings = Findings(report, anchors=len(anchors))
            findings.pools = [_pool_figures(pool, report) for pool in Pool.objects.order_by("pk")]
    except Exception as error:  # the check itself broke: that is a failed run, not a crash
        logger.exception("reconciliation: the journal could not be verified")
        findings = Findings(VerificationReport(), anchors=len(anchors))
        findings.report.fail(f"could not be verified: {type(error).__name__}: {error}")
    for problem in unreadable:
        findings.report.fail(problem)
    return findings


def _summary(report: Reconciliation) -> dict[str, Any]:
    return {
        "report": report.pk,
        "daily": report.daily,
        "run_key": report.run_key,
        "first_broken": None
        if not report.broken_chain
        else {"chain": report.broken_chain, "sequence": report.broken_sequence},
        "problem_count": report.problem_count,
    }


def raise_alert(report: Reconciliation) -> None:
    """A failed run's alert, inside the transaction that stores its report: the significant event
    SE02 on the `admin` chain (its signed webhook, its count and the security log follow it after
    the commit: `jackpot.notifications.significant`), and a line at ERROR once committed."""
    payload = {**_summary(report), "problems": report.problems[:ALERT_PROBLEMS]}
    ledger.record(chain=ledger.ADMIN_CHAIN, kind=FAILED, actor=ACTOR, payload=payload)
    first = report.problems[0] if report.problems else "(no problem named)"
    more = report.problem_count - 1
    transaction.on_commit(
        lambda: logger.error(
            "reconciliation %s FAILED: %s%s",
            report.pk,
            first,
            f" (and {more} more)" if more > 0 else "",
        )
    )


def announce_recovery(report: Reconciliation, failed: Reconciliation) -> None:
    """An ok run after a failed one: `reconciliation.recovered` on the `admin` chain, naming the
    failed report it follows (the significant event SE03), and a line at WARNING once committed."""
    payload = {**_summary(report), "after": failed.pk}
    ledger.record(chain=ledger.ADMIN_CHAIN, kind=RECOVERED, actor=ACTOR, payload=payload)
    transaction.on_commit(
        lambda: logger.warning(
            "reconciliation %s ok again after the failed reconciliation %s", report.pk, failed.pk
        )
    )


def _store(
    findings: Findings, *, run_key: str | None, daily: bool, started: datetime
) -> Reconciliation:
    report = findings.report
    with transaction.atomic():
        locks.advisory(locks.Advisory.RECONCILIATION_STORE)
        previous = Reconciliation.objects.order_by("-pk").first()
        try:
            with transaction.atomic():
                stored = Reconciliation.objects.create(
                    run_key=run_key,
                    daily=daily,
                    started_at=started,
                    finished_at=timezone.now(),
                    ok=report.ok,
                    chains=report.chains,
                    events=report.events,
                    transfers=report.transfers,
                    pool_count=len(findings.pools),
                    anchors=findings.anchors,
                    broken_chain=report.broken_chain or "",
                    broken_sequence=report.broken_sequence,
                    problem_count=len(report.problems),
                    problems=report.problems[: Reconciliation.PROBLEMS_KEPT],
                    pools=findings.pools,
                )
        except IntegrityError:  # another delivery of the same run stored it first
            return Reconciliation.objects.get(run_key=run_key)
        if not stored.ok:
            raise_alert(stored)
        elif previous is not None and not previous.ok:
            announce_recovery(stored, previous)
    return stored


def reconcile(
    *, run_key: str | None = None, daily: bool = False, full: bool | None = None
) -> Reconciliation:
    """Check everything and store the report, alerting on any difference (the module's
    docstring): from the newest checkpoint, or from the first event when `full` (by default, the
    daily run). A run whose `run_key` already has a report returns it and does nothing."""
    if run_key is not None:
        done = Reconciliation.objects.filter(run_key=run_key).first()
        if done is not None:
            return done
    started = timezone.now()
    trigger = VerificationTrigger.DAILY if daily else VerificationTrigger.RECONCILIATION
    if daily if full is None else full:  # a job of its own, its progress shown as it goes
        claim = begin(trigger)
        findings = check(full=True, progress=claim.progress())
        claim.finish(findings.report)
    else:
        findings = check()
        keep_checkpoint(findings.report)
        record(findings.report, trigger=trigger, started=started)
    return _store(findings, run_key=run_key, daily=daily, started=started)
