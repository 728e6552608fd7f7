"""Who may act, as the journal explains it, checked at the request (compliance 51).

The rows that say who may do what are rows the service's role can write; only the journal's
events carry an HMAC under a key the database does not hold. So a request acts on a row only as
an authentic event explains it.

Invariants:
- an account acts with its powers only when they equal its latest authentic account event's;
- a staff or terminal token acts only when its authentic issue names the same row and hash and
  no later authentic event revoked it (a terminal's rechecked once a minute per process);
- a two-person change is decided only as its authentic proposal event says;
- an event that does not verify explains nothing: fail closed. Reads only, through partial
  indexes: never the journal's age.

Each rule in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Q
from django.db.models.fields.json import KT

from jackpot.models import AuditEvent, StaffToken
from jackpot.money import ledger
from jackpot.money.ledger import authentic
from jackpot.staff.records import ACCOUNT_KINDS, POWERS, RECORDED
from jackpot.staff.roles import ROLES

security_log = logging.getLogger("jackpot.security")

#: The account events a request reads, sorted as the partial indexes of jackpot 0029 name them.
ACCOUNT_EVENTS = sorted(ACCOUNT_KINDS)
TOKEN_ISSUED = "staff_token.issued"
#: A terminal's issues, and its revocation.
TERMINAL_ISSUES = ("terminal.bootstrapped", "terminal.issued")
TERMINAL_REVOKED = "terminal.revoked"
#: Events found authentic, by id and hash: an event's row never changes (the journal is
#: append-only), so a process verifies each once. Bounded by the club's terminal events.
_verified: dict[tuple[int, str], bool] = {}
#: Memo of one request's answer on the user object Django made for it.
_MEMO = "_journal_explains"


def _authentic_once(event_id: int, digest: str) -> bool:
    key = (event_id, digest)
    if key not in _verified:
        event = AuditEvent.objects.filter(pk=event_id).first()
        _verified[key] = event is not None and event.hash == digest and authentic(event)
    return _verified[key]


def _refused(what: str, why: str) -> None:
    security_log.warning("journal does not explain %s: %s", what, why)


def row_powers(user: User) -> dict[str, Any]:
    """The account's powers as its rows hold them (the shape of
    `jackpot.staff.accounts.snapshot`)."""
    roles = sorted(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
    return {
        "is_active": user.is_active,
        "is_staff": user.is_staff,
        "is_superuser": user.is_superuser,
        "roles": roles,
    }


def powerful(powers: dict[str, Any]) -> bool:
    return bool(
        powers.get("is_active")
        and (powers.get("is_staff") or powers.get("is_superuser") or powers.get("roles"))
    )


#: The newest account event naming a user before or after, each side down its own index (an OR
#: of the two may walk the admin chain from its head instead), in one statement: a staff
#: request's check costs one round trip, not the ORM's two.
_LATEST_ACCOUNT_EVENT = " UNION ALL ".join(
    f"(SELECT * FROM jackpot_auditevent WHERE chain = 'admin' AND kind IN"
    f" ('staff.bootstrapped', 'staff.changed') AND (payload #>> '{{{side},username}}') = %s"
    " ORDER BY sequence DESC LIMIT 1)"
    for side in ("after", "before")
)


def _latest_account_event(username: str) -> AuditEvent | None:
    if connection.vendor == "postgresql":
        found = list(AuditEvent.objects.raw(_LATEST_ACCOUNT_EVENT, [username, username]))
    else:
        events = AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN, kind__in=ACCOUNT_EVENTS)
        found = [
            event
            for side in ("after", "before")
            if (
                event := events.alias(name=KT(f"payload__{side}__username"))
                .filter(name=username)
                .order_by("-sequence")
                .first()
            )
            is not None
        ]
    return max(found, key=lambda event: event.sequence, default=None)


def journal_powers(username: str) -> dict[str, Any] | None:
    """The powers the journal gives the account named `username` now, or None when no authentic
    event gives it any (none names it, the last one renamed it away, or one does not verify)."""
    latest = _latest_account_event(username)
    if latest is None:
        latest = (
            AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN, kind=RECORDED)
            .order_by("-sequence")
            .first()
        )
        if latest is None or not authentic(latest):
            return None
        listed = [a for a in latest.payload["accounts"] if a.get("username") == username]
        return {name: listed[0][name] for name in POWERS} if listed else None
    if not authentic(latest):
        _refused(f"staff {username}", f"its event {latest.chain}/{latest.sequence} does not verify")
        return None
    after = latest.payload.get("after") or {}
    if after.get("username") != username or any(name not in after for name in POWERS):
        return None  # renamed away, or an event that does not show every power
    return {name: after[name] for name in POWERS}


def journal_view(user: User) -> dict[str, Any]:
    """The powers `user` may act with: the journal's (`journal_powers`), or, for an account no
    event explains, its rows stripped of every power (it may be active, and nothing more)."""
    said = journal_powers(user.get_username())
    if said is not None:
        return said
    return {**row_powers(user), "is_staff": False, "is_superuser": False, "roles": []}


def explained(user: Any) -> bool:
    """Whether `user`'s powers are the journal's (an account without power always is). Asked
    once per request: the answer is kept on the user object Django made for it."""
    if user is None or not getattr(user, "is_authenticated", False) or user.pk is None:
        return True
    return bool(acting_roles(user) is not None)


def acting_roles(user: Any) -> frozenset[str] | None:
    """The roles `user` acts with: its rows' when the journal explains them (none for an
    account without power), None when it does not. Kept on the user object for the request."""
    if user is None or not getattr(user, "is_authenticated", False) or user.pk is None:
        return frozenset()
    if not hasattr(user, _MEMO):
        rows, said = row_powers(user), journal_view(user)
        if rows != said:
            _refused(f"staff {user.get_username()}", f"its rows give {rows}, its events {said}")
        setattr(user, _MEMO, frozenset(rows["roles"]) if rows == said else None)
    memo: frozenset[str] | None = getattr(user, _MEMO)
    return memo


#: A staff token's issue, and the later issues for its holder that revoked the others.
_TOKEN_EVENTS = (
    "SELECT * FROM jackpot_auditevent WHERE chain = 'admin' AND kind = 'staff_token.issued'"
    " AND ((payload->>'token') = %s OR ((payload->>'user_id') = %s"
    " AND (payload->'revoked_others') = 'true'::jsonb)) ORDER BY sequence"
)


def token_explained(token: StaffToken) -> bool:
    """Whether the live staff token `token` (its row and its account) was issued by an authentic
    `staff_token.issued` event for that row, hash and account, and not revoked since by another."""
    mine = (str(token.pk), str(token.user_id))
    if connection.vendor == "postgresql":  # one raw statement: the ORM's compiling cost more
        issued = list(AuditEvent.objects.raw(_TOKEN_EVENTS, mine))
    else:
        issued = list(
            AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN, kind=TOKEN_ISSUED)
            .alias(token=KT("payload__token"), user_id=KT("payload__user_id"))
            .filter(Q(token=mine[0]) | Q(user_id=mine[1], payload__revoked_others=True))
            .order_by("sequence")
        )
    own = [event for event in issued if event.payload.get("token") == token.pk]
    if len(own) != 1 or not authentic(own[0]):
        _refused(f"staff token {token.pk}", "no authentic staff_token.issued event")
        return False
    said = own[0].payload
    holder = (
        said["user_id"] == token.user_id
        if "user_id" in said
        else said.get("user") == token.user.get_username()
    )
    expiry = token.expires_at.isoformat() if token.expires_at else None
    if (
        not holder
        or said.get("token_hash") != token.token_hash
        or ("expires_at" in said and said["expires_at"] != expiry)
    ):
        _refused(f"staff token {token.pk}", "its row differs from its staff_token.issued event")
        return False
    later = [e for e in issued if e.sequence > own[0].sequence and authentic(e)]
    if later:
        _refused(f"staff token {token.pk}", f"revoked by {later[0].chain}/{later[0].sequence}")
        return False
    return True


def terminal_explained(terminal_id: int, table_id: int, token_hash: str) -> bool:
    """Whether the live terminal `terminal_id` of `table_id`, with this token hash, was issued
    by an authentic event for that terminal, table and hash and not revoked since by another."""
    events = list(
        AuditEvent.objects.filter(chain=ledger.ADMIN_CHAIN)
        .alias(terminal=KT("payload__terminal"), table=KT("payload__table"))
        .filter(
            Q(kind__in=[*TERMINAL_ISSUES, TERMINAL_REVOKED], terminal=str(terminal_id))
            | Q(kind__in=TERMINAL_ISSUES, table=str(table_id))
        )
        .order_by("sequence")
        .values_list("pk", "sequence", "kind", "hash", "payload")
    )
    own = [e for e in events if e[2] in TERMINAL_ISSUES and e[4].get("terminal") == terminal_id]
    if len(own) != 1 or not _authentic_once(own[0][0], own[0][3]):
        _refused(f"terminal {terminal_id}", "no authentic issue event")
        return False
    said = own[0][4]
    if said.get("table") != table_id or said.get("token_hash") != token_hash:
        _refused(f"terminal {terminal_id}", "its row differs from its issue event")
        return False
    for pk, sequence, kind, digest, payload in events:
        revoking = (
            payload.get("terminal") == terminal_id
            if kind == TERMINAL_REVOKED
            else terminal_id in (payload.get("revoked") or ())
        )
        if sequence > own[0][1] and revoking and _authentic_once(pk, digest):
            _refused(f"terminal {terminal_id}", f"revoked by admin/{sequence}")
            return False
    return True


def terminal_said(
    terminal_id: int,
    table_id: int,
    token_hash: str,
    event_id: int | None,
    digest: str | None,
    table: str | None,
    issued_hash: str | None,
    issues: int | None,
    revoked: bool,
) -> bool:
    """`terminal_explained` from what the terminal's own look-up read of the journal in the
    same statement (`tables.api.authentication`): its issue event (id, hash, table, token
    hash, how many issues name it) and whether a later event revoked it."""
    if event_id is None or digest is None or issues != 1:
        _refused(f"terminal {terminal_id}", "no single issue event")
        return False
    if table != str(table_id) or issued_hash != token_hash or revoked:
        _refused(f"terminal {terminal_id}", "its row differs from its events, or it was revoked")
        return False
    if not _authentic_once(event_id, digest):
        _refused(f"terminal {terminal_id}", "its issue event does not verify")
        return False
    return True
