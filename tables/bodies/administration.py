"""Tables and their terminal tokens as their administration sees them: a table's change by one
admin, a move between pools proposed for another admin's approval, the terminal tokens issued.

Invariants: a table's pool changes only by a proposal another admin approves (`TableMoveProposal`),
never by `TableChange`; a terminal token is proposed by one admin (`TerminalIssue`) and made by
another's approval, shown once, to the approver (`TerminalIssued`), stored only as its SHA-256
and prefix.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.codes import ErrorCode
from core.wire import Body, Instant, NonBlank, Refusal
from jackpot.bodies.common import Note


class TableChange(Body):
    """What one admin may change of a table: whether it is open for play (null: as it is). The
    pool it feeds changes by a proposal another admin approves (`TableMoveProposal`)."""

    enabled: bool | None = None


class TableMoveProposal(Body):
    """A proposal to link the table to `pool`, move it there, or unlink it (null), and why.
    Another admin approves it, while the table is closed and has no open round."""

    pool: Annotated[int, Field(ge=1)] | None
    reason: Note


class TableAnswer(Body):
    """A table as its administration sees it."""

    id: int
    name: str
    game: Literal["uth", "stud"]
    pool: int | None
    enabled: bool
    seats: Annotated[int, Field(ge=1, le=7)]
    open_rounds: Annotated[int, Field(ge=0, description="rounds opened and not yet closed")]


class TerminalIssue(Body):
    """A proposal of a new token for a terminal of the table, and why: another admin approves it,
    and only then is the token made, shown to that admin. Left false, `revoke_others` is the
    rotation: the table's other tokens keep working until each is revoked, so the terminal
    switches between two rounds. True revokes them when it is approved: a lost or compromised
    terminal."""

    name: Annotated[NonBlank, Field(max_length=80), Refusal(ErrorCode.INVALID_TEXT)]
    revoke_others: bool = False
    reason: Note


class TerminalAnswer(Body):
    """One of a table's terminal tokens, as stored: never the token itself, only its prefix."""

    id: int
    table: int
    name: str
    prefix: Annotated[str, Field(description="the token's first characters, to tell tokens apart")]
    created_at: Instant
    revoked_at: Annotated[Instant | None, Field(description="null: the token works")]


class TerminalList(Body):
    """A table's terminal tokens, newest first."""

    terminals: list[TerminalAnswer]


class TerminalIssued(TerminalAnswer):
    """A token just issued by the approval of `change`: `token` is shown this once, to the
    approver (only its SHA-256 is stored; its proposer never sees it)."""

    token: Annotated[str, Field(description="the bearer token; shown once, never again")]
    change: Annotated[int, Field(description="the approved `terminal.issue` change")]
