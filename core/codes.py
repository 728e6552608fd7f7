"""Every error code a client can get, with its HTTP status and meaning: the one registry.

`docs/api.md` lists the same table (a test holds the two together), and a test reads every
`ApiError`/`RulesError` raised in the code so that no code escapes this list. The rules engine's
own codes (`rules.errors.RulesCode`, which must not import Django or this package) are a
subset of these, checked by a test too.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    # The request's shape (tables.bodies, jackpot.bodies, core.wire)
    INVALID_REQUEST = "invalid_request"
    UNKNOWN_FIELD = "unknown_field"
    MALFORMED_JSON = "malformed_json"
    BODY_TOO_LARGE = "body_too_large"
    INVALID_PARAMETER = "invalid_parameter"
    INVALID_ROUND_ID = "invalid_round_id"
    INVALID_SEAT = "invalid_seat"
    TOO_MANY_SEATS = "too_many_seats"
    DUPLICATE_SEAT = "duplicate_seat"
    INVALID_REASON = "invalid_reason"
    INVALID_TEXT = "invalid_text"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    # The rules engine (rules.errors.RulesCode)
    INVALID_CARD = "invalid_card"
    DUPLICATE_CARD = "duplicate_card"
    WRONG_CARD_COUNT = "wrong_card_count"
    INVALID_DECISION = "invalid_decision"
    INVALID_BET = "invalid_bet"
    # A round against its stored state
    SEATS_MISMATCH = "seats_mismatch"
    ROUND_NOT_FOUND = "round_not_found"
    ROUND_ID_REUSED = "round_id_reused"
    ROUND_SETTLED = "round_settled"
    ROUND_VOID = "round_void"
    ROUND_IN_PROGRESS = "round_in_progress"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    IDEMPOTENCY_KEY_BUSY = "idempotency_key_busy"
    # A table's administration, and a round opening while it changes
    TABLE_NOT_FOUND = "table_not_found"
    TABLE_CHANGED = "table_changed"
    STAKE_CHANGED = "stake_changed"
    TABLE_OPEN = "table_open"
    TABLE_HAS_OPEN_ROUNDS = "table_has_open_rounds"
    POOL_NOT_FOR_STUD = "pool_not_for_stud"
    TERMINAL_NOT_FOUND = "terminal_not_found"
    # Pools and awards
    POOL_NOT_FOUND = "pool_not_found"
    AWARD_NOT_FOUND = "award_not_found"
    AWARD_WRONG_STATUS = "award_wrong_status"
    FOUR_EYES = "four_eyes"
    SEPARATION_OF_DUTIES = "separation_of_duties"
    VOID_REQUESTED = "void_requested"
    VOID_NOT_REQUESTED = "void_not_requested"
    AWARD_FOLLOWS_UNAPPROVED = "award_follows_unapproved"
    METER_WOULD_GO_NEGATIVE = "meter_would_go_negative"
    WINNER_IDENTITY_REQUIRED = "winner_identity_required"
    WINNER_NOT_IDENTIFIED = "winner_not_identified"
    SURVEILLANCE_REVIEW_REQUIRED = "surveillance_review_required"
    SURVEILLANCE_REFERRED = "surveillance_referred"
    REFERRAL_NOT_OPEN = "referral_not_open"
    INVALID_FOOTAGE_RANGE = "invalid_footage_range"
    # A pool's parameters: proposed by one admin, approved by another
    CHANGE_NOT_FOUND = "change_not_found"
    CHANGE_WRONG_STATUS = "change_wrong_status"
    CHANGE_STALE = "change_stale"
    POOL_TABLES_OPEN = "pool_tables_open"
    POOL_ROUND_OPEN = "pool_round_open"
    TERMS_FIXED = "terms_fixed"
    NO_CHANGE = "no_change"
    INVALID_CHANGE = "invalid_change"
    NOT_THE_PROPOSER = "not_the_proposer"
    TOO_FEW_ADMINS = "too_few_admins"
    # A pool's life: suspended by one admin, stopped for good by two (jackpot.pools.lifecycle)
    POOL_SUSPENDED = "pool_suspended"
    POOL_STOPPED = "pool_stopped"
    POOL_NOT_SUSPENDED = "pool_not_suspended"
    POOL_AWARDS_UNPAID = "pool_awards_unpaid"
    INVALID_DISPOSITION = "invalid_disposition"
    # A stop's notices and the register of orphans (jackpot.pools.notices, jackpot.pools.orphans)
    INVALID_EFFECTIVE_AT = "invalid_effective_at"
    NOTICE_PERIOD_RUNNING = "notice_period_running"
    INVALID_NOTICE = "invalid_notice"
    NOTICE_NOT_FOUND = "notice_not_found"
    NOTICE_SENT = "notice_sent"
    INVALID_HEIR = "invalid_heir"
    NO_ORPHANS = "no_orphans"
    ORPHANS_RECOVERED = "orphans_recovered"
    ORPHANS_FINAL = "orphans_final"
    # The club's sessions and their drop boxes (tables.club)
    SESSION_NOT_FOUND = "session_not_found"
    SESSION_OPEN = "session_open"
    SESSION_CLOSED = "session_closed"
    SESSION_NOT_CLOSED = "session_not_closed"
    TABLE_NOT_IN_SESSION = "table_not_in_session"
    DROP_NOT_COUNTED = "drop_not_counted"
    DROP_COUNTED_BY_ANOTHER = "drop_counted_by_another"
    DROP_CONFIRMED = "drop_confirmed"
    COUNT_DISAGREES = "count_disagrees"
    COUNT_UNEXPLAINED = "count_unexplained"
    # A documented correction, two people (jackpot.pools.corrections)
    INVALID_CORRECTION = "invalid_correction"
    CORRECTION_BELOW_ZERO = "correction_below_zero"
    AWARD_PAID = "award_paid"
    AWARD_VOID = "award_void"
    AWARD_DUE_NOT_POSITIVE = "award_due_not_positive"
    # The auditors' background exports
    EXPORT_NOT_FOUND = "export_not_found"
    RECONCILIATION_NOT_FOUND = "reconciliation_not_found"
    VERIFICATION_NOT_FOUND = "verification_not_found"
    EXPORT_NOT_READY = "export_not_ready"
    EXPORT_FAILED = "export_failed"
    EXPORT_EXPIRED = "export_expired"
    RANGE_TOO_LARGE = "range_too_large"
    # Who calls, how often, and the rest of HTTP
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    PERMISSION_DENIED = "permission_denied"
    SECOND_FACTOR_REQUIRED = "second_factor_required"
    # Authority as the journal explains it (jackpot.staff.authority) and the second person's code
    POWERS_UNEXPLAINED = "powers_unexplained"
    ACCOUNT_UNEXPLAINED = "account_unexplained"
    CHANGE_UNEXPLAINED = "change_unexplained"
    SECOND_FACTOR_CODE_REQUIRED = "second_factor_code_required"
    SECOND_FACTOR_CODE_WRONG = "second_factor_code_wrong"
    THROTTLED = "throttled"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    NOT_ACCEPTABLE = "not_acceptable"
    BAD_REQUEST = "bad_request"
    INVALID = "invalid"
    INTERNAL_ERROR = "internal_error"
    PROGRESSIVE_CLOSED = "progressive_closed"


#: code -> (HTTP status, meaning). docs/api.md's "Error codes" table says the same.
ERRORS: dict[ErrorCode, tuple[int, str]] = {
    ErrorCode.INVALID_REQUEST: (400, "the body or a field is not of the declared shape"),
    ErrorCode.UNKNOWN_FIELD: (400, "a field the operation does not declare"),
    ErrorCode.MALFORMED_JSON: (400, "not JSON, NaN or Infinity, a duplicate key, too deep, NUL"),
    ErrorCode.BODY_TOO_LARGE: (413, "the body is larger than the limit"),
    ErrorCode.INVALID_PARAMETER: (400, "a query parameter is not of its declared type or range"),
    ErrorCode.INVALID_ROUND_ID: (400, "round_id is not 1 to 64 of letters, digits and . _ : -"),
    ErrorCode.INVALID_SEAT: (400, "a seat number is not an integer from 1 to the table's seats"),
    ErrorCode.TOO_MANY_SEATS: (400, "more seats than the table has"),
    ErrorCode.DUPLICATE_SEAT: (400, "a seat appears twice"),
    ErrorCode.INVALID_REASON: (400, "a void's reason is empty or longer than 200 characters"),
    ErrorCode.INVALID_TEXT: (400, "an award note or reason is empty or over 500 characters"),
    ErrorCode.INVALID_IDEMPOTENCY_KEY: (400, "Idempotency-Key is not 1 to 128 printable ASCII"),
    ErrorCode.INVALID_CARD: (400, "a card is not a rank 2-9TJQKA and a suit cdhs"),
    ErrorCode.DUPLICATE_CARD: (400, "a card appears twice in the round"),
    ErrorCode.WRONG_CARD_COUNT: (400, "a hand, board or dealer has the wrong number of cards"),
    ErrorCode.INVALID_DECISION: (400, "a decision the game's rules do not allow"),
    ErrorCode.INVALID_BET: (400, "a bet amount or combination the game's rules do not allow"),
    ErrorCode.SEATS_MISMATCH: (400, "the result's seats are not the seats the round opened"),
    ErrorCode.ROUND_NOT_FOUND: (404, "no such round at this table"),
    ErrorCode.ROUND_ID_REUSED: (409, "the round id was opened with another body"),
    ErrorCode.ROUND_SETTLED: (409, "the round is already settled (with another body)"),
    ErrorCode.ROUND_VOID: (409, "the round is void"),
    ErrorCode.ROUND_IN_PROGRESS: (409, "another round is open at the table: settle or void it"),
    ErrorCode.IDEMPOTENCY_KEY_REUSED: (409, "the Idempotency-Key was used with another request"),
    ErrorCode.IDEMPOTENCY_KEY_BUSY: (409, "a request with this Idempotency-Key is in progress"),
    ErrorCode.TABLE_NOT_FOUND: (404, "no such table"),
    ErrorCode.TABLE_CHANGED: (409, "the table was closed or moved while the round opened; retry"),
    ErrorCode.STAKE_CHANGED: (409, "the pool's stake changed while the round opened; retry"),
    ErrorCode.TABLE_OPEN: (409, "a table moves to another pool only while closed"),
    ErrorCode.TABLE_HAS_OPEN_ROUNDS: (409, "the table has open rounds: settle or void them first"),
    ErrorCode.POOL_NOT_FOR_STUD: (400, "only an Ultimate Texas Hold'em table feeds a pool"),
    ErrorCode.TERMINAL_NOT_FOUND: (404, "the table has no such terminal"),
    ErrorCode.POOL_NOT_FOUND: (404, "no such pool"),
    ErrorCode.AWARD_NOT_FOUND: (404, "no such award"),
    ErrorCode.AWARD_WRONG_STATUS: (409, "the award's status does not allow this step"),
    ErrorCode.FOUR_EYES: (
        403,
        "one person took both steps of a two-person control: verify and approve an award, "
        "review it on video and verify or approve it, refer it and decide the referral, "
        "request and confirm a jackpot's void, propose and approve a change (a pool's, a "
        "table's move, a staff account's), or approve a change of their own account",
    ),
    ErrorCode.SEPARATION_OF_DUTIES: (
        403,
        "an account that configures (the admin role, the admin site) never verifies, "
        "approves, pays or voids: money decisions are a supervisor's or a manager's",
    ),
    ErrorCode.VOID_REQUESTED: (
        409,
        "the jackpot's void is requested: confirm or cancel it before another step",
    ),
    ErrorCode.VOID_NOT_REQUESTED: (409, "no void of this award is requested to confirm or cancel"),
    ErrorCode.AWARD_FOLLOWS_UNAPPROVED: (
        409,
        "the award follows another (an envy, its jackpot) not yet approved: it is approved or "
        "paid only once that one is",
    ),
    ErrorCode.METER_WOULD_GO_NEGATIVE: (
        409,
        "the meter cannot give back the voided jackpot's reset: nothing was changed",
    ),
    ErrorCode.WINNER_IDENTITY_REQUIRED: (
        400,
        "an award at or above the identification threshold is paid with the winner's identity",
    ),
    ErrorCode.WINNER_NOT_IDENTIFIED: (404, "the award's payment recorded no winner's identity"),
    ErrorCode.SURVEILLANCE_REVIEW_REQUIRED: (
        409,
        "the pool requires surveillance to confirm a jackpot on video before its approval",
    ),
    ErrorCode.SURVEILLANCE_REFERRED: (
        409,
        "surveillance referred the award: no approval, payment or new review until a manager "
        "clears it",
    ),
    ErrorCode.REFERRAL_NOT_OPEN: (409, "the award has no referral awaiting a manager's decision"),
    ErrorCode.INVALID_FOOTAGE_RANGE: (400, "a review's footage range: from is not before to"),
    ErrorCode.CHANGE_NOT_FOUND: (
        404,
        "the pool has no such parameter change, or the table no such move",
    ),
    ErrorCode.CHANGE_WRONG_STATUS: (409, "the change was already applied, rejected or withdrawn"),
    ErrorCode.CHANGE_STALE: (409, "the pool changed since the proposal: propose again"),
    ErrorCode.POOL_TABLES_OPEN: (409, "a pool's parameters change only with its tables closed"),
    ErrorCode.POOL_ROUND_OPEN: (
        409,
        "a pool's parameters change only with none of its rounds open",
    ),
    ErrorCode.TERMS_FIXED: (
        409,
        "a pool's increment terms (stake, shares, seed, paytable) never change while it runs: "
        "new terms come by its replacement",
    ),
    ErrorCode.NO_CHANGE: (400, "the proposal changes nothing: the pool has these values"),
    ErrorCode.INVALID_CHANGE: (400, "a value the pool cannot take (a bound, the shares, a name)"),
    ErrorCode.NOT_THE_PROPOSER: (403, "only the admin who proposed a change may withdraw it"),
    ErrorCode.TOO_FEW_ADMINS: (
        409,
        "the club keeps at least two active admins: the last two are not deactivated",
    ),
    ErrorCode.POOL_SUSPENDED: (
        409,
        "the pool is suspended (its reason and since when in the message): no progressive "
        "stake, no award approved or paid, until an admin resumes it",
    ),
    ErrorCode.POOL_STOPPED: (
        409,
        "the pool was stopped for good: it takes no stake and is never suspended, resumed or "
        "changed again",
    ),
    ErrorCode.POOL_NOT_SUSPENDED: (409, "only a suspended pool is resumed"),
    ErrorCode.POOL_AWARDS_UNPAID: (
        409,
        "a pool is stopped only once every award of it is paid or void",
    ),
    ErrorCode.INVALID_DISPOSITION: (
        400,
        "a stop's disposition names another active pool of the same currency, or the orphan "
        "account",
    ),
    ErrorCode.INVALID_CORRECTION: (
        400,
        "a correction's target is meter, reserve or award (naming its award), its amount a "
        "signed non-zero number of cents",
    ),
    ErrorCode.CORRECTION_BELOW_ZERO: (
        409,
        "the correction would take the meter or the reserve below zero: nothing was changed",
    ),
    ErrorCode.AWARD_PAID: (409, "the award is paid: what it paid is not corrected"),
    ErrorCode.AWARD_VOID: (409, "the award is void: it owes nothing to correct"),
    ErrorCode.AWARD_DUE_NOT_POSITIVE: (
        409,
        "the correction would leave the award owing nothing or less: void it instead",
    ),
    ErrorCode.EXPORT_NOT_FOUND: (404, "no such export"),
    ErrorCode.RECONCILIATION_NOT_FOUND: (404, "no such reconciliation report"),
    ErrorCode.VERIFICATION_NOT_FOUND: (404, "no such verification run"),
    ErrorCode.EXPORT_NOT_READY: (409, "the export is still queued or running: poll it until done"),
    ErrorCode.EXPORT_FAILED: (409, "the export failed (its error says why): start another"),
    ErrorCode.EXPORT_EXPIRED: (410, "the export's file was deleted after its retention"),
    ErrorCode.INVALID_EFFECTIVE_AT: (
        400,
        "a voluntary stop names its effective_at, at least 15 days ahead; an involuntary one "
        "names none",
    ),
    ErrorCode.NOTICE_PERIOD_RUNNING: (
        409,
        "a voluntary stop is approved only from its effective_at and 15 days after its notice "
        "was recorded sent",
    ),
    ErrorCode.INVALID_NOTICE: (
        400,
        "a notice's sending names a known channel and a reference",
    ),
    ErrorCode.NOTICE_NOT_FOUND: (
        404,
        "no such notice",
    ),
    ErrorCode.NOTICE_SENT: (
        409,
        "the notice is recorded sent already",
    ),
    ErrorCode.INVALID_HEIR: (
        400,
        "orphans are recovered into another active pool of the same currency, created before "
        "the season's end",
    ),
    ErrorCode.NO_ORPHANS: (
        409,
        "the pool has no orphans in the register (it was not stopped to orphans)",
    ),
    ErrorCode.ORPHANS_RECOVERED: (
        409,
        "the pool's orphans were recovered already",
    ),
    ErrorCode.ORPHANS_FINAL: (
        409,
        "the pool's orphans are final: their season has ended",
    ),
    ErrorCode.SESSION_NOT_FOUND: (404, "no such session"),
    ErrorCode.SESSION_OPEN: (409, "a session is open already: it is closed before another opens"),
    ErrorCode.SESSION_CLOSED: (409, "the session is closed already"),
    ErrorCode.SESSION_NOT_CLOSED: (409, "drop boxes are counted once their session is closed"),
    ErrorCode.TABLE_NOT_IN_SESSION: (404, "the session's snapshot has no line for this table"),
    ErrorCode.DROP_NOT_COUNTED: (409, "the drop box has no first count to confirm"),
    ErrorCode.DROP_COUNTED_BY_ANOTHER: (
        409,
        "another person counted this drop box: they recount, or you confirm",
    ),
    ErrorCode.DROP_CONFIRMED: (
        409,
        "the drop box's count is confirmed already: a difference is recorded, never corrected",
    ),
    ErrorCode.COUNT_DISAGREES: (
        409,
        "the blind second count differs from the first: nothing is confirmed, the first"
        " person recounts",
    ),
    ErrorCode.COUNT_UNEXPLAINED: (409, "the drop count's row is not what its authentic event says"),
    ErrorCode.RANGE_TOO_LARGE: (
        400,
        "export.csv takes a from-to range of at most EXPORT_SYNC_MAX_DAYS days: for a longer"
        " or open one, POST /api/v1/awards/exports",
    ),
    ErrorCode.NOT_AUTHENTICATED: (401, "no credentials"),
    ErrorCode.AUTHENTICATION_FAILED: (401, "unknown or revoked credentials"),
    ErrorCode.PERMISSION_DENIED: (403, "not allowed for these credentials"),
    ErrorCode.SECOND_FACTOR_REQUIRED: (
        403,
        "a session signed in without its second factor: sign in again with a code",
    ),
    ErrorCode.POWERS_UNEXPLAINED: (
        403,
        "the caller's roles or flags are not the ones the journal gave the account",
    ),
    ErrorCode.ACCOUNT_UNEXPLAINED: (
        409,
        "the account's roles or flags are not the journal's: no change is recorded over them",
    ),
    ErrorCode.CHANGE_UNEXPLAINED: (409, "the change is not what its proposal event filed"),
    ErrorCode.SECOND_FACTOR_CODE_REQUIRED: (
        403,
        "a two-person step's second person sends a fresh second-factor code",
    ),
    ErrorCode.SECOND_FACTOR_CODE_WRONG: (
        403,
        "the second-factor code is not the person's now, or was used already",
    ),
    ErrorCode.THROTTLED: (429, "too many requests; Retry-After says when to retry"),
    ErrorCode.NOT_FOUND: (404, "no such path or object"),
    ErrorCode.METHOD_NOT_ALLOWED: (405, "the path does not take this method"),
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: (415, "the body is not application/json"),
    ErrorCode.NOT_ACCEPTABLE: (406, "the Accept header asks for what is not served"),
    ErrorCode.BAD_REQUEST: (400, "a request Django itself refuses (a bad Host header...)"),
    ErrorCode.INVALID: (400, "any other refusal of the framework (rare)"),
    ErrorCode.INTERNAL_ERROR: (500, "a bug; it has been logged"),
    ErrorCode.PROGRESSIVE_CLOSED: (
        503,
        "the database cannot be reached or did not answer in time: nothing was recorded; retry"
        " after Retry-After seconds",
    ),
}
