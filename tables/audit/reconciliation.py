"""Reconciliation on a schedule (compliance 4): every pool recomputed from the journal, the chains
verified, the meter identity checked, a report stored, and an alert on any difference.

Invariants:
- `reconcile()` reads in one REPEATABLE READ, read-only snapshot: routine from the newest
  checkpoint every few minutes, full from the first event daily; a check that breaks is a
  failed run;
- a failed run raises `reconciliation.failed` on the admin chain (and the security log); the
  next ok one `reconciliation.recovered`, decided under this module's advisory lock;
- idempotent: a scheduled run's `run_key` is unique, so a run delivered twice stores one report;
- nothing moves money; the reports are read and append only.

The steps in full: docs/operations.md, "The modules, in detail".
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
