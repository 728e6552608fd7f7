"""The progressive's data: pools, the double-entry journal, awards, the audit chain, the
checkpoints of its verification and the verification runs, the two-person changes, staff tokens
and the staff's forced password changes, the auditors' export
jobs, the outbox and its webhook deliveries, the winners' identities (encrypted),
surveillance's reviews of awards.

Design (see docs/accounting.md):
- A pool's money lives in its accounts; an account's balance is the sum of the transfers that
  credit it minus those that debit it, so the balances of a pool always add up to zero.
- `Transfer` and `AuditEvent` rows are append-only: PostgreSQL triggers refuse UPDATE and DELETE.
- `Pool.meter_units` / `reserve_units` are the hot counters, in units of 1/10,000 of a cent, kept
  by single-statement updates; the journal's meter and reserve balances always equal them rounded
  down to the cent (verify_journal checks it).
"""

from jackpot.models.access import ActivationCode, SealedTOTPDevice, StaffSecurity, StaffToken
from jackpot.models.audit import AuditChain, AuditEvent
from jackpot.models.awards import Award, AwardKind, AwardStatus, PaymentMethod
from jackpot.models.changes import STAFF_KINDS, ChangeKind, ChangeStatus, ParameterChange
from jackpot.models.checkpoints import (
    Checkpoint,
    Verification,
    VerificationStatus,
    VerificationTrigger,
)
from jackpot.models.exports import ExportJob, ExportStatus
from jackpot.models.identity import CommitProbe, DatabaseIdentity
from jackpot.models.ledger import (
    AWARD_GRANTED_BY,
    REPEATABLE_CODES,
    Account,
    AccountKind,
    Transfer,
    TransferCode,
)
from jackpot.models.notices import Addressee, Notice, NoticeCause, OrphanEntry
from jackpot.models.outbox import (
    DeliveryStatus,
    OutboxMessage,
    OutboxStatus,
    WebhookDelivery,
)
from jackpot.models.pool import UNITS_PER_CENT, Pool, PoolStatus
from jackpot.models.surveillance import (
    ReferralDecision,
    ReferralOutcome,
    SurveillanceReview,
    Verdict,
)
from jackpot.models.winners import DocumentType, WinnerIdentity

__all__ = [
    "AWARD_GRANTED_BY",
    "REPEATABLE_CODES",
    "STAFF_KINDS",
    "UNITS_PER_CENT",
    "Account",
    "AccountKind",
    "ActivationCode",
    "Addressee",
    "AuditChain",
    "AuditEvent",
    "Award",
    "AwardKind",
    "AwardStatus",
    "ChangeKind",
    "ChangeStatus",
    "Checkpoint",
    "CommitProbe",
    "DatabaseIdentity",
    "DeliveryStatus",
    "DocumentType",
    "ExportJob",
    "ExportStatus",
    "Notice",
    "NoticeCause",
    "OrphanEntry",
    "OutboxMessage",
    "OutboxStatus",
    "ParameterChange",
    "PaymentMethod",
    "Pool",
    "PoolStatus",
    "ReferralDecision",
    "ReferralOutcome",
    "SealedTOTPDevice",
    "StaffSecurity",
    "StaffToken",
    "SurveillanceReview",
    "Transfer",
    "TransferCode",
    "Verdict",
    "Verification",
    "VerificationStatus",
    "VerificationTrigger",
    "WebhookDelivery",
    "WinnerIdentity",
]
