"""The progressive's Celery tasks: entry points like views, as thin.

Each task takes ids (or nothing), calls a service, and is safe to run twice: delivery is at least
once (`acks_late` with reject-on-worker-lost, config/settings/cache_and_celery.py), so a task
whose worker was killed runs again. Tasks are sent by name (`celery.current_app.send_task`), so
the layers below never import this module.
"""

from __future__ import annotations

from celery import shared_task

from jackpot.audit import outbox_journal
from jackpot.awards import winners
from jackpot.notifications import outbox
from jackpot.pools import notices, orphans
from jackpot.reporting import export_jobs
from jackpot.sign import display


@shared_task(name="jackpot.refresh_displays")
def refresh_displays() -> int:
    """Publish every pool's committed figures to the signs' cache (beat, DISPLAY_REFRESH_SECONDS):
    the safety net beside the publish after each commit."""
    return display.refresh_all()


@shared_task(name="jackpot.build_export")
def build_export(job_id: int) -> str:
    """Write an export job's file (`jackpot.reporting.export_jobs`): a job done is left alone, one
    whose builder was killed is built anew from scratch; two deliveries never make two files."""
    return export_jobs.export_job_build(job_id=job_id).value


@shared_task(name="jackpot.sweep_exports")
def sweep_exports() -> dict[str, list[int]]:
    """Send again the export jobs Redis never got or whose builder died; delete the files past
    their retention (beat, EXPORT_SWEEP_SECONDS)."""
    swept = export_jobs.export_jobs_sweep()
    return {"resent": swept.resent, "expired": swept.expired}


@shared_task(name="jackpot.relay_outbox")
def relay_outbox(message_id: int) -> str:
    """Do an outbox message's work (`jackpot.notifications.outbox`: its webhooks), with what its
    journal event says (`jackpot.audit.outbox_journal`): claimed, so a duplicate delivery does
    nothing; a relay killed mid-task is taken over once its lease runs out."""
    return outbox.relay(message_id, outbox_journal.vouched).value


@shared_task(name="jackpot.purge_winner_identities")
def purge_winner_identities() -> list[int]:
    """Delete the winners' identities past their retention, recorded on the journal (beat, daily
    at 05:30 UTC); the awards purged. Twice is harmless: the second finds none."""
    return winners.purge_expired(actor="system:purge_winner_identities")


@shared_task(name="jackpot.sweep_outbox")
def sweep_outbox() -> list[int]:
    """Send again the outbox messages Redis never got, whose relay died, or whose webhook retries
    are due (beat, OUTBOX_SWEEP_SECONDS)."""
    return outbox.sweep().resent


@shared_task(name="jackpot.notices_overdue")
def notices_overdue() -> list[int]:
    """Tell each notice unsent past its deadline, once (beat, NOTICE_CHECK_SECONDS; SE22)."""
    return notices.notices_overdue()


@shared_task(name="jackpot.orphans_final")
def orphans_final() -> list[int]:
    """Make final, once, the orphans past their season (beat, ORPHANS_CHECK_SECONDS; SE23)."""
    return orphans.orphans_final()
