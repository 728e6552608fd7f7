"""Who may act, compared with the events that said so: staff accounts' powers (active, staff,
superuser, roles) and the live staff tokens (one part of a verification's walk,
`jackpot.audit.projections.ProgressiveProjection`).

Invariants:
- every account with power, and every account the events gave power, has the flags and roles
  its last `staff.changed` / `staff.bootstrapped` event showed;
- every live staff token was issued by a `staff_token.issued` event, to that account, with its
  prefix, hash and expiry, and not revoked since;
- what is compared is what the club has now, never the journal's age; a token's holder is the
  account that held its name when it was issued.

The comparison in full, and the `staff.recorded` starting point: docs/accounting.md, "The
modules, in detail".
"""

from __future__ import annotations

from bisect import bisect_right, insort
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q

from jackpot.models import StaffToken
from jackpot.money import ledger
from jackpot.staff.roles import ROLES

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


def _time(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def _first(span: tuple[datetime, str]) -> datetime:
    return span[0]


class Names:
    """Which account held which user name, from when, as the admin chain's account events say
    (a rename is a `staff.changed` event whose snapshots' user names differ). A name an event
    gives is the account that held it at the event's time: never whoever held one of that
    account's names at another time (two accounts that swapped names stay two).

    An account is a key: the name it held when the journal first saw it (held since before,
    when no event made it), or, for one an event made or first showed under a name the journal
    had seen held before, that name and the event's time (`name#time`: no user name holds '#').
    Events written since issue 37 give the account's id (`jackpot.staff.accounts.snapshot`): a row
    is the key's account when it has that id (if an event gave it) and the name the journal says
    the key holds now. What is kept grows with the renames and the accounts, never with the journal;
    a checkpoint carries it all (`carried()`). Times are the events' own (the chains share no
    other order); a step written as its actor was being renamed may name them by the other name.
    """

    def __init__(self, carried: dict[str, Any] | None = None) -> None:
        carried = carried or {}
        #: Per name, from which time which key held it (in time order; "": no one).
        self.spans: dict[str, list[tuple[datetime, str]]] = {
            name: [(_time(at), key) for at, key in spans]
            for name, spans in carried.get("spans", {}).items()
        }
        self.current: dict[str, str] = dict(carried.get("current", {}))  # key: its name now
        self.ids: dict[str, int] = {key: int(pk) for key, pk in carried.get("ids", {}).items()}
        self._holders = {name: key for key, name in self.current.items()}
        self._keys = {pk: key for key, pk in self.ids.items()}

    def observe(self, payload: dict[str, Any], at: datetime) -> None:
        """An event showing an account before and after it changed (`ACCOUNT_KINDS`)."""
        before, after = payload.get("before") or {}, payload.get("after") or {}
        name = after.get("username")
        if not name:
            return
        pk = after.get("id", before.get("id"))
        key = self._keys.get(pk) if pk is not None else None
        if key is None:
            key = self.holder(before.get("username") or name)
            if key is not None and pk is not None and self.ids.get(key, pk) != pk:
                key = None  # the name's holder is another account: this one is new to it
        if key is None:  # an account the journal has not seen under a name it holds
            seen = name in self.spans or name in self._holders
            key = f"{name}#{at.isoformat()}" if seen else name
            if key != name:
                self._take(name, key, at)
        elif (was := self.current.get(key, key)) != name:
            insort(self.spans.setdefault(was, []), (at, ""), key=_first)
            if self._holders.get(was) == key:
                del self._holders[was]
            self._take(name, key, at)
        self.current[key], self._holders[name] = name, key
        if pk is not None:
            self.ids[key], self._keys[int(pk)] = int(pk), key

    def _take(self, name: str, key: str, at: datetime) -> None:
        insort(self.spans.setdefault(name, []), (at, key), key=_first)

    def holder(self, name: str) -> str | None:
        """The key holding `name` now (None: no one, since it was left)."""
        if name in self._holders:
            return self._holders[name]
        return None if name in self.spans else name

    def held(self, name: str, at: datetime | str) -> str | None:
        """The key that held `name` at `at` (None: no one)."""
        spans = self.spans.get(name)
        if not spans:
            return name
        index = bisect_right(spans, _time(at), key=_first)
        return name if index == 0 else spans[index - 1][1] or None

    def is_account(self, key: str | None, pk: int | None, username: str | None) -> bool:
        """Whether the row's account (`pk`, named `username` now) is the key's: the same id,
        when an event gave it, and the name the journal says it holds now (a rename by SQL, or
        another account given its name that way, is not)."""
        if key is None or self.ids.get(key, pk) != pk:
            return False
        return self.current.get(key, key) == username

    def same(
        self, said: str, at: datetime | str | None, pk: int | None, username: str | None
    ) -> bool:
        """Whether the row's account is the one an event at `at` named `said` (None: now)."""
        return self.is_account(
            self.holder(said) if at is None else self.held(said, at), pk, username
        )

    def carried(self) -> dict[str, Any]:
        return {
            "spans": {
                name: [[at.isoformat(), key] for at, key in spans]
                for name, spans in sorted(self.spans.items())
            },
            "current": dict(sorted(self.current.items())),
            "ids": dict(sorted(self.ids.items())),
        }


class StaffProjection:
    """One walk's staff accounts and live staff tokens, as the events say them; `names`: the
    walk's names, by which a token's holder is known (`Names`)."""

    def __init__(self, carried: dict[str, Any] | None = None, names: Names | None = None) -> None:
        carried = carried or {}
        self.names = names or Names()
        self.accounts: dict[str, dict[str, Any]] = dict(carried.get("accounts", {}))
        self.tokens: dict[int, dict[str, Any]] = {
            int(pk): token for pk, token in carried.get("tokens", {}).items()
        }
        self.token_id = int(carried.get("token_id", 0))
        #: Tokens issued by events written before the journal covered tokens (no id, no hash):
        #: their prefixes, and to whom (a `Names` key, as a token's "user").
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
        elif kind == "staff_token.issued":  # to the account holding the name now ("": no one)
            user = self.names.holder(payload["user"]) or ""
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
        # The row's fields; whose account it is (the user's id).
        rows: dict[int, dict[str, str]] = {}
        holders: dict[int, int] = {}
        for pk, user, username, prefix, token_hash, expires_at in StaffToken.objects.filter(
            Q(revoked_at__isnull=True) | Q(pk__gt=self.token_id)
        ).values_list("pk", "user_id", "user__username", "prefix", "token_hash", "expires_at"):
            rows[pk] = {
                "user": username,
                "prefix": prefix,
                "token_hash": token_hash,
                "expires_at": expires_at.isoformat() if expires_at else "",
            }
            holders[pk] = user
        for pk in sorted(rows.keys() | self.tokens.keys()):
            row, said = rows.get(pk), self.tokens.get(pk)
            if said is None and row is not None:
                legacy = self.legacy.get(row["prefix"])
                if self.names.is_account(legacy, holders[pk], row["user"]):
                    continue  # issued before the journal covered tokens: prefix and owner match
            if said is None:
                found.append(f"staff token {pk}: no staff_token.issued event (or it was revoked)")
            elif row is None:
                found.append(f"staff token {pk}: issued and live in the journal, no row holds it")
            elif wrong := [  # an older event gives no expiry
                name
                for name in said
                if not (
                    self.names.is_account(said[name], holders[pk], row[name])
                    if name == "user"
                    else row[name] == said[name]
                )
            ]:
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
