"""seed_demo: create the demo floor idempotently and print it, with fresh tokens, as JSON.

Tokens are stored hashed, so this output is the only place they are shown: every run revokes the
previous demo tokens and issues new ones for each terminal and staff account.

The demo is the operator's (who holds the database): it makes its pool, links its tables and gives
its people their roles at once, and issues each demo person's own token. On a real floor each of
those is a two-person change (`jackpot.pools.parameters`, `jackpot.staff.accounts`); the demo has
two admins so that one can approve what the other proposes. No one is a superuser: the admin role
opens the admin. The admins configure and decide no money; the supervisors and the manager decide it
and configure nothing (`jackpot.staff.duties`).
Where the second factor is required (`STAFF_SECOND_FACTOR_REQUIRED=1`; off in `make run`), each
person without one also gets the activation code its enrollment needs, issued by the operator as
for a fresh install's first admins (`jackpot.staff.second_factor.activation_issue`).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from jackpot.approvals import presence
from jackpot.models import Pool
from jackpot.pools.creation import pool_create
from jackpot.staff import second_factor
from jackpot.staff.accounts import operator_grant, staff_token_issue
from tables.models import Game, Table
from tables.services import operator_terminal_issue, table_create

ACTOR = "system:seed_demo"
POOL_NAME = "Club UTH Progressive"


class Command(BaseCommand):
    help = "Create (idempotently) the demo floor and print it with fresh tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tables", type=int, default=6, help="Ultimate Hold'em tables (1-200)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        count = options["tables"]
        if not 1 <= count <= 200:
            self.stderr.write("--tables must be between 1 and 200")
            raise SystemExit(2)
        with transaction.atomic():
            floor = self._seed(count)
        if options["json"]:
            self.stdout.write(json.dumps(floor, indent=2))
        else:
            for table in floor["tables"]:
                self.stdout.write(f"{table['name']:<12} id={table['id']:<4} token={table['token']}")
            admins = [floor["admin"], floor["second_admin"]]
            for person in [floor["auditor"], *floor["supervisors"], floor["manager"], *admins]:
                activation = person.get("activation")
                self.stdout.write(
                    f"{person['username']:<12} password={person['password']} "
                    f"token={person['token']}" + (f" activation={activation}" if activation else "")
                )

    def _seed(self, count: int) -> dict[str, Any]:
        pool = Pool.objects.filter(name=POOL_NAME).first() or pool_create(
            name=POOL_NAME, actor=ACTOR
        )
        tables = [self._table(f"UTH {n}", Game.UTH, pool) for n in range(1, count + 1)]
        tables.append(self._table("Stud 1", Game.STUD, None))
        return {
            "pools": [{"id": pool.pk, "name": pool.name}],
            "tables": [
                {
                    "id": table.pk,
                    "name": table.name,
                    "game": table.game,
                    "pool": table.pool_id,
                    "token": operator_terminal_issue(
                        table=table, name="demo terminal", revoke_others=True, actor=ACTOR
                    ).token,
                }
                for table in tables
            ],
            "auditor": self._staff("auditor", "auditor"),
            "supervisors": [self._staff(f"supervisor{n}", "supervisor") for n in (1, 2)],
            # Decides surveillance's referrals; like the supervisors, configures nothing.
            "manager": self._staff("manager1", "manager"),
            "admin": self._staff("admin", "admin"),
            "second_admin": self._staff("admin2", "admin"),
            "surveillance": self._staff("surveillance1", "surveillance"),
        }

    def _table(self, name: str, game: Game, pool: Pool | None) -> Table:
        table = Table.objects.filter(name=name).first()
        return table or table_create(name=name, game=game, pool=pool, actor=ACTOR)

    def _staff(self, username: str, role: str) -> dict[str, Any]:
        user = operator_grant(username=username, role=role, actor=ACTOR)
        # Each person signs in to a browser page (the floor's, /floor/login/; the admin's,
        # /admin/): a fresh password, shown only here.
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.save(update_fields=["password"])
        person: dict[str, Any] = {"username": username, "role": role, "password": password}
        person["token"] = staff_token_issue(user=user, revoke_others=True, actor=ACTOR)
        if presence.required() and not (
            second_factor.enrolled(user) or second_factor.journal_enrolled(user)
        ):
            person["activation"] = second_factor.activation_issue(subject=user, user=None)
        return person
