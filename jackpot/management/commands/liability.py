"""liability: a pool's period-end liability for the accountant's month-end script.

`manage.py liability --pool N [--at ISO] [--from ISO] [--format json|csv]` prints the statement
`GET /api/v1/pools/{pool}/liability` answers, read the same way (`jackpot.reporting.liability`, on
the standby when one serves), as the same JSON or CSV (`jackpot.reporting.statements`). A bad
parameter is the API's refusal, as a CommandError naming it (exit status 1).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from core.errors import ApiError
from core.replicas import replica_reads
from core.wire import read_query
from jackpot.bodies.liability import LiabilityQuery
from jackpot.reporting.liability import liability_statement
from jackpot.reporting.statements import liability_csv


class Command(BaseCommand):
    help = "A pool's liability at an instant (a month's close), from the journal alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True)
        parser.add_argument("--at", help="ISO 8601 time with its offset (default now)")
        parser.add_argument("--from", dest="from_", help="the period's start (default: the month)")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        params = {"format": options["format"]}
        params |= {"at": options["at"]} if options["at"] else {}
        params |= {"from": options["from_"]} if options["from_"] else {}
        try:
            query = read_query(LiabilityQuery, params)
            with replica_reads():
                liability = liability_statement(options["pool"], query, now=timezone.now())
        except ApiError as error:
            raise CommandError(f"{error.code} ({error.param}): {error.message}") from None
        if query.format == "csv":
            self.stdout.write(liability_csv(liability).decode(), ending="")
            return
        self.stdout.write(json.dumps(liability.model_dump(mode="json"), indent=2, sort_keys=True))
