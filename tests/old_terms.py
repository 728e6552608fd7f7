"""A pool's terms changed as the service did before they were fixed (compliance 56, issue 40):
what an older journal holds, for the tests that keep reading such journals (the verification's
projection, the reconciliation's meter identity, the liability statement).

`change_terms_as_before` writes what `jackpot.pools.parameters.change_approve` wrote then: the
proposal and its event, the pool's row, and `pool.changed` with both people, in one transaction.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from jackpot.approvals import changes
from jackpot.models import ChangeKind, ParameterChange, Pool
from jackpot.money import ledger


@transaction.atomic
def change_terms_as_before(
    *, pool_id: int, values: dict[str, Any], proposer: User, approver: User
) -> ParameterChange:
    pool = Pool.objects.select_for_update().get(pk=pool_id)
    before = {field: getattr(pool, field) for field in values}
    change = changes.propose(
        kind=ChangeKind.POOL_PARAMETERS,
        pool=pool,
        changes=values,
        before=before,
        reason="before the terms were fixed",
        user=proposer,
    )
    for field, value in values.items():
        setattr(pool, field, value)
    pool.save(update_fields=list(values))
    now = timezone.now()
    ledger.record(
        chain=ledger.pool_chain(pool.pk),
        kind="pool.changed",
        actor=f"user:{approver.get_username()}",
        occurred_at=now,
        payload={
            "pool": pool.pk,
            "before": before,
            "after": values,
            **changes.applied(change, approver, "", now),
        },
    )
    return change
