"""A problem the audit names: what is wrong, and the chain and position where it was found (none
when no event is at fault: a row without its event, an anchor file unreadable). One class for the
verification's walk (`jackpot.audit.projections`) and the anchors' check
(`jackpot.audit.anchors`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    message: str
    chain: str | None = None
    sequence: int | None = None
