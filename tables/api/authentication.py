"""Terminal authentication: `Authorization: Bearer term_...`, one terminal, one table.

A revoked or unknown token is a 401; a terminal reaching for another table's rounds is a 403.

With `TERMINAL_CLIENT_CERTIFICATES` on (mutual TLS, compliance requirement 39), a token is not
enough: the proxy must have verified the terminal's client certificate (`X-Client-Verify:
SUCCESS`) and the certificate's subject must name the token's table (`CN=table-<id>`), else the
request is a 401 like a bad token, logged with the rest of the refusals. The two headers are
trusted because the proxy always sets them itself, overwriting whatever a client sent, and the
service listens only where the proxy reaches it (docs/operations.md).
"""

from __future__ import annotations

import re
import time
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connection
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.tokens import hash_token
from jackpot.api.authentication import bearer_token
from jackpot.models import Pool
from jackpot.money import rows
from jackpot.staff import authority
from tables.models import Table, Terminal


class TerminalPrincipal:
    """The authenticated caller of the round API."""

    is_authenticated = True

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.table: Table = terminal.table

    @property
    def actor(self) -> str:
        return f"terminal:{self.terminal.pk}"

    def __str__(self) -> str:
        return self.actor


# What a round needs of its terminal, table and pool; anything else is loaded if ever read.
_TERMINAL = ("table_id",)
_TABLE = ("name", "game", "pool_id", "seats", "enabled")
_POOL = ("name", "currency", "stake_cents", "verification_threshold_cents", "paytable_version")


#: On PostgreSQL the same statement reads what the journal says of the terminal
#: (`jackpot.staff.authority.terminal_said`, through the indexes of jackpot 0029): its issue event
#: (id, hash, table, token hash, and how many there are) and whether an event since revoked
#: it. A forged revocation only refuses; a forged issue fails its HMAC.
_ISSUES = "('terminal.bootstrapped', 'terminal.issued')"
_JOURNAL_SQL = (
    ", e.id, e.hash, e.payload->>'table', e.payload->>'token_hash', e.issues, EXISTS ("
    "SELECT 1 FROM jackpot_auditevent r WHERE r.chain = 'admin' AND r.sequence > e.sequence"
    " AND ((r.kind = 'terminal.revoked' AND (r.payload->>'terminal') = t.id::text)"
    f" OR (r.kind IN {_ISSUES} AND (r.payload->>'table') = t.table_id::text"
    " AND r.payload->'revoked' @> to_jsonb(t.id))))"
)
_JOURNAL_JOIN = (
    " LEFT JOIN LATERAL (SELECT id, hash, payload, sequence, count(*) OVER () AS issues"
    f" FROM jackpot_auditevent WHERE chain = 'admin' AND kind IN {_ISSUES}"
    " AND (payload->>'terminal') = t.id::text LIMIT 1) e ON true"
)


#: How long a process takes a token the journal explained as still explained: the row's
#: revocation is read on every request; the journal's (against a revocation undone by SQL) once
#: a minute, so a round's request costs no journal read but the first of each minute.
JOURNAL_RECHECK_SECONDS = 60.0
_explained_at: dict[str, float] = {}


@cache
def _terminal_sql(journal: bool) -> str:
    return (
        f"SELECT {rows.columns(Terminal, 't', _TERMINAL)}, {rows.columns(Table, 'tb', _TABLE)},"
        f" {rows.columns(Pool, 'p', _POOL)}{_JOURNAL_SQL if journal else ''}"
        " FROM tables_terminal t"
        " JOIN tables_table tb ON tb.id = t.table_id"
        " LEFT JOIN jackpot_pool p ON p.id = tb.pool_id"
        f"{_JOURNAL_JOIN if journal else ''}"
        " WHERE t.token_hash = %s AND t.revoked_at IS NULL"
    )


def _terminal_by_token(token_hash: str) -> Terminal | None:
    """The live terminal with this token, its table and the table's pool, in one query; 401
    unless the journal explains it (`jackpot.staff.authority`).

    Plain SQL (`jackpot.money.rows`) and only the fields a round uses: it runs on every terminal
    request, and the ORM's select_related query cost three times as much. On PostgreSQL the
    journal's part rides in the same statement; elsewhere (`make run`'s SQLite) it is one more;
    either once a `JOURNAL_RECHECK_SECONDS` per token and process.
    """
    now = time.monotonic()
    last = _explained_at.get(token_hash)
    recheck = last is None or now - last >= JOURNAL_RECHECK_SECONDS
    journal = recheck and connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(_terminal_sql(journal), [token_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(_TERMINAL) + 1
    end = split + len(_TABLE) + 1
    pool_end = end + len(_POOL) + 1
    terminal = rows.from_row(Terminal, row[:split], _TERMINAL)
    table = rows.from_row(Table, row[split:end], _TABLE)
    table.pool = rows.from_row(Pool, row[end:pool_end], _POOL) if table.pool_id else None
    terminal.table = table
    if not recheck:
        return terminal
    said = row[pool_end:]
    explained = (
        authority.terminal_said(terminal.pk, terminal.table_id, token_hash, *said)
        if journal
        else authority.terminal_explained(terminal.pk, terminal.table_id, token_hash)
    )
    if not explained:
        _explained_at.pop(token_hash, None)
        # A row the service's role can write proves nothing: the token acts only as its
        # issue in the journal says (jackpot.staff.authority).
        raise AuthenticationFailed("this terminal token was not issued as the journal says")
    _explained_at[token_hash] = now
    return terminal


_COMMON_NAME = re.compile(r"(?:^|,)CN=([^,]*)")


def certificate_table(verify: str, subject: str) -> str | None:
    """The table a verified client certificate names (`CN=table-<id>` in its RFC 2253 subject),
    or None when the proxy did not verify one or its subject names no table."""
    if verify != "SUCCESS":
        return None
    names = _COMMON_NAME.findall(subject)
    if len(names) != 1 or not re.fullmatch(r"table-[1-9][0-9]*", names[0]):
        return None
    return names[0].removeprefix("table-")


def check_client_certificate(request: Request, table_id: int) -> None:
    """Refuse a terminal whose client certificate the proxy did not verify, or that names
    another table than its token's."""
    meta = request._request.META
    verify = meta.get("HTTP_X_CLIENT_VERIFY", "")
    named = certificate_table(verify, meta.get("HTTP_X_CLIENT_SUBJECT", ""))
    if named is None:
        if verify == "SUCCESS":
            why = "its subject names no table"
        else:
            # nginx says NONE when no certificate came; no header at all: none came through it
            presented = verify not in ("", "NONE")
            why = f"the proxy's verification: {verify[:80]}" if presented else "none was presented"
        raise AuthenticationFailed(f"a terminal needs its client certificate here ({why})")
    if named != str(table_id):
        raise AuthenticationFailed(
            f"the client certificate names table {named}, the token table {table_id}"
        )


class TerminalAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[TerminalPrincipal, str] | None:
        token = bearer_token(request, "term", what="a table terminal's token")
        if token is None:
            return None
        token_hash = hash_token(token)
        terminal = _terminal_by_token(token_hash)
        if terminal is None:
            raise AuthenticationFailed("unknown or revoked terminal token")
        if settings.TERMINAL_CLIENT_CERTIFICATES:
            check_client_certificate(request, terminal.table_id)
        return TerminalPrincipal(terminal), token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="jackpot"'


class IsTableTerminal(BasePermission):
    """The caller is the terminal of the table named in the URL. Whether the table is open for
    play matters only to a new round (`OpenForPlay`): a table closed mid-round still has its
    round in progress settled or voided by its terminal, and its rounds read."""

    message = "this terminal may only post rounds for its own table"

    def has_permission(self, request: Request, view: Any) -> bool:
        principal = request.user
        if not isinstance(principal, TerminalPrincipal):
            return False
        return str(principal.table.pk) == str(view.kwargs.get("table"))


class OpenForPlay(BasePermission):
    """A round opens (a POST to the table's rounds) only at a table open for play: closing a
    table stops new rounds. An open in flight while it closes is refused by the open itself
    (409 `table_changed`, `tables.rounds.store.pool_of_record`)."""

    message = "this table is disabled"

    def has_permission(self, request: Request, view: Any) -> bool:
        principal = request.user
        if request.method != "POST":
            return True
        return isinstance(principal, TerminalPrincipal) and principal.table.enabled
