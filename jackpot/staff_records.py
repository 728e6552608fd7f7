"""Who may act, compared with the events that said so: staff accounts' powers (active, staff,
superuser, roles) and the live staff tokens (one part of a verification's walk,
`jackpot.projections.Projections`).

A role or a flag is given only by an event on the `admin` chain that shows the account after it
(`staff.changed`, `staff.bootstrapped`: `jackpot.staff.snapshot`), and a staff token only by a
`staff_token.issued` event; the chain's HMAC covers both. So someone who writes to the database
without the journal's key and adds themselves to the admin group, makes themselves a superuser,
revives a revoked token or puts a token of theirs on a colleague's account is named:
- every account with power (active, and staff, superuser or holding a role), and every account
  the events gave power, has the flags and roles the last event showing it gave;
- every live staff token (not revoked), and every token row made since the checkpoint's highest
  id, was issued by an event and not revoked since by another (`revoke_others`), to the account,
  with the prefix and token hash the event gives (the hash is in the events written since the
  journal covers it: older events give the prefix), and the expiry it gives (since tokens expire:
  a token whose end was moved by SQL is named).
What is compared is what the club has now (its staff, its live tokens), never the journal's age:
a routine run compares the same as a full one.

A journal begun before it covered accounts has one `staff.recorded` event, written by the
migration that began it (jackpot 0015, `record_accounts`): every account as it stood then, the
starting point of the comparison. It is written once, by the migration, in the upgrade's
transaction; the list is the operator's to review (docs/operations.md).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q

from jackpot import ledger
from jackpot.models import StaffToken
from jackpot.services import ROLES

#: The account's fields that give power, as the events' snapshots show them.
POWERS = ("is_active", "is_staff", "is_superuser", "roles")
#: Events whose payload shows an account after it changed.
ACCOUNT_KINDS = frozenset({"staff.changed", "staff.bootstrapped"})
#: The accounts as they stood when the journal began to cover them (migration jackpot 0015).
RECORDED = "staff.recorded"


def _powerful(fields: dict[str, Any]) -> bool:
    return bool(
        fields.get("is_active")
        and (fields.get("is_staff") or fields.get("is_superuser") or fields.get("roles"))
    )


class StaffRecords:
    """One walk's staff accounts and live staff tokens, as the events say them."""

    def __init__(self, carried: dict[str, Any] | None = None) -> None:
        carried = carried or {}
        self.accounts: dict[str, dict[str, Any]] = dict(carried.get("accounts", {}))
        self.tokens: dict[int, dict[str, Any]] = {
            int(pk): token for pk, token in carried.get("tokens", {}).items()
        }
        self.token_id = int(carried.get("token_id", 0))
        #: Tokens issued by events written before the journal covered tokens (no id, no hash):
        #: their prefixes, and to whom.
        self.legacy: dict[str, str] = dict(carried.get("legacy", {}))

    def observe(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == RECORDED:
            for account in payload["accounts"]:
                self.accounts[account["username"]] = {name: account[name] for name in POWERS}
        elif kind in ACCOUNT_KINDS:
            before, after = payload.get("before") or {}, payload.get("after") or {}
            name = after.get("username")
            if not name:
                return
            # A rename carries the account's powers to its new name; an event shows what it
            # changed at least (every event the service writes shows them all).
            old = before.get("username")
            said = (
                self.accounts.pop(old, {}) if old and old != name else self.accounts.get(name, {})
            )
            self.accounts[name] = {**said, **{p: after[p] for p in POWERS if p in after}}
        elif kind == "staff_token.issued":
            user = payload["user"]
            if payload.get("revoked_others"):
                self.tokens = {pk: t for pk, t in self.tokens.items() if t["user"] != user}
                self.legacy = {p: u for p, u in self.legacy.items() if u != user}
            if "token" not in payload:
                self.legacy[payload["prefix"]] = user
            else:
                pk = int(payload["token"])
                self.tokens[pk] = {
                    "user": user,
                    "prefix": payload["prefix"],
                    "token_hash": payload["token_hash"],
                }
                if "expires_at" in payload:
                    self.tokens[pk]["expires_at"] = payload["expires_at"]
                self.token_id = max(self.token_id, pk)

    def problems(self) -> list[str]:
        return self._accounts() + self._tokens()

    def _accounts(self) -> list[str]:
        found = []
        rows: dict[str, dict[str, Any]] = {}
        for username, *flags in User.objects.values_list(
            "username", "is_active", "is_staff", "is_superuser"
        ):
            rows[username] = {**dict(zip(POWERS[:3], flags, strict=True)), "roles": []}
        for username, role in User.objects.filter(groups__name__in=ROLES).values_list(
            "username", "groups__name"
        ):
            rows[username]["roles"].append(role)
        for username in sorted(rows.keys() | self.accounts.keys()):
            row, said = rows.get(username), self.accounts.get(username)
            if row is not None:
                row["roles"] = sorted(row["roles"])
            if said is None:
                if row is not None and _powerful(row):
                    found.append(f"staff {username}: holds powers no staff event gave")
            elif row is None:
                if _powerful(said):
                    found.append(
                        f"staff {username}: the journal gave powers, no account holds them"
                    )
            elif any(row[name] != said.get(name) for name in POWERS) and (
                _powerful(row) or _powerful(said)
            ):
                wrong = [name for name in POWERS if row[name] != said.get(name)]
                found.append(
                    f"staff {username}: the account's {', '.join(wrong)} differ from its events"
                )
        return found

    def _tokens(self) -> list[str]:
        found = []
        rows: dict[int, dict[str, Any]] = {
            pk: {
                "user": user,
                "prefix": prefix,
                "token_hash": token_hash,
                "expires_at": expires_at.isoformat() if expires_at else None,
            }
            for pk, user, prefix, token_hash, expires_at in StaffToken.objects.filter(
                Q(revoked_at__isnull=True) | Q(pk__gt=self.token_id)
            ).values_list("pk", "user__username", "prefix", "token_hash", "expires_at")
        }
        for pk in sorted(rows.keys() | self.tokens.keys()):
            row, said = rows.get(pk), self.tokens.get(pk)
            if said is None and row is not None and self.legacy.get(row["prefix"]) == row["user"]:
                continue  # issued before the journal covered tokens: its prefix and owner match
            if said is None:
                found.append(f"staff token {pk}: no staff_token.issued event (or it was revoked)")
            elif row is None:
                found.append(f"staff token {pk}: issued and live in the journal, no row holds it")
            elif any(row[name] != said[name] for name in said):  # an older event: no expiry
                wrong = [name for name in said if row[name] != said[name]]
                found.append(
                    f"staff token {pk}: the row's {', '.join(wrong)} differ from its events"
                )
        self.token_id = max([self.token_id, *rows])
        return found

    def carried(self) -> dict[str, Any]:
        return {
            "accounts": dict(sorted(self.accounts.items())),
            "tokens": {str(pk): token for pk, token in sorted(self.tokens.items())},
            "token_id": self.token_id,
            "legacy": dict(sorted(self.legacy.items())),
        }


def record_accounts(users: Any, roles_of: Any) -> None:
    """Write the `staff.recorded` event of a journal begun before it covered accounts: every
    account (`users`, the migration's historical User model) with its powers, `roles_of(user)`
    its roles. Nothing on a database without accounts (a new install)."""
    accounts = [
        {
            "username": user.username,
            "is_active": user.is_active,
            "is_staff": user.is_staff,
            "is_superuser": user.is_superuser,
            "roles": sorted(roles_of(user)),
        }
        for user in users.objects.order_by("username")
    ]
    if accounts:
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind=RECORDED,
            actor="system:upgrade",
            payload={"accounts": accounts},
        )
