"""purge_winner_identities: delete the winners' identities past their retention.

Each identity is kept WINNER_IDENTITY_RETENTION_DAYS (5 years by default) from its recording
(`keep_until`); this deletes those whose retention has ended, records which on the journal
(`winner.purged`, admin chain) in the same transaction, and prints their awards. An identity
still within its retention is never deleted: the database refuses it (migration jackpot
0018_award_payment; requirement 37). The worker's beat runs the same daily
(`jackpot.purge_winner_identities`, 05:30 UTC); this is for running it by hand.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from jackpot.awards.winners import purge_expired


class Command(BaseCommand):
    help = "Delete the winners' identities whose retention has ended (recorded on the journal)."

    def handle(self, *args: Any, **options: Any) -> None:
        purged = purge_expired(actor="system:purge_winner_identities")
        awards = ", ".join(str(award) for award in purged) or "none"
        self.stdout.write(f"purged {len(purged)} winner identities (awards: {awards})")
