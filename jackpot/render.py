"""Awards as the API shows them: rendering only, no reads and no writes.

Kept apart from `jackpot.awards` (the award's way to payment) so that the reads in
`jackpot.selectors` can render awards without importing the module that writes them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User

from jackpot.models import Award


def award_json(award: Award) -> dict[str, Any]:
    """An award as the API shows it (select_related the four users when listing many)."""

    def who(user: User | None) -> str | None:
        return None if user is None else user.get_username()

    def when(moment: datetime | None) -> str | None:
        return moment.isoformat() if moment else None

    return {
        "id": award.pk,
        "pool": award.pool_id,
        "round": award.round_id,
        "seat": award.seat,
        "kind": award.kind,
        "amount_cents": award.amount_cents,
        "status": award.status,
        "sequence": award.sequence,
        "created_at": when(award.created_at),
        "verified_by": who(award.verified_by),
        "verified_at": when(award.verified_at),
        "verification_note": award.verification_note,
        "approved_by": who(award.approved_by),
        "approved_at": when(award.approved_at),
        "paid_by": who(award.paid_by),
        "paid_at": when(award.paid_at),
        "voided_by": who(award.voided_by),
        "voided_at": when(award.voided_at),
        "void_reason": award.void_reason,
    }
