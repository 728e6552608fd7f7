"""The progressive's Celery tasks: entry points like views, as thin.

Each task takes ids (or nothing), calls a service, and is safe to run twice: delivery is at least
once (`acks_late` with reject-on-worker-lost, config/settings/base.py), so a task whose worker was
killed runs again. Tasks are sent by name (`celery.current_app.send_task`), so the layers below
never import this module.
"""

from __future__ import annotations

from celery import shared_task

from jackpot import display


@shared_task(name="jackpot.refresh_displays")
def refresh_displays() -> int:
    """Publish every pool's committed figures to the signs' cache (beat, DISPLAY_REFRESH_SECONDS):
    the safety net beside the publish after each commit."""
    return display.refresh_all()
