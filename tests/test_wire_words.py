"""The words clients and auditors read, held literally: a rename inside the code cannot change
them silently (docs/glossary.md: one word per thing inside; these words stay as they are).

- the OpenAPI schema's components, each with its property names, and its operations, each by
  its id with its parameters' names;
- the header of every CSV the service writes (the payout export, the winners' register, each
  chart of a pool's history, the liability statement and its figures' names);
- the journal's event kinds and their payloads' keys, as a representative story writes them.

A change to any of these is a change to the wire or to the journal's record: make it on purpose,
here, with the clients' and auditors' agreement (and the journal's payloads already hashed never
change).
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.utils import timezone

from jackpot.models import AuditEvent
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import api_clients, surveilled
from tests.winners import PAY

JSON = "application/json"

#: Each component of the schema, with its property names (sorted, space-separated).
COMPONENTS = {
    "AccountKind": "",
    "Award": (
        "amount_cents approval_note approved_at approved_by board cards corrected_cents "
        "created_at due_cents follows game "
        "id kind paid_at paid_by payment_method payment_note payment_reference pool review "
        "round round_id seat sequence status surveillance_required table table_name "
        "verification_note verified_at verified_by void_reason void_request_reason "
        "void_requested_at void_requested_by voided_at voided_by waits_on_follows "
        "winner_identified winning_five"
    ),
    "AwardApproval": "note second_factor_code",
    "AwardFigure": "amount_cents count",
    "AwardFrequency": "amount_cents expected expected_decimal expected_rate kind observed voided",
    "AwardKind": "",
    "AwardNote": "note",
    "AwardPage": "count limit offset results",
    "AwardPayment": "method note reference winner",
    "AwardReason": "reason",
    "AwardReferral": "decision reason second_factor_code",
    "AwardReview": "camera from note reason to verdict",
    "AwardStatus": "",
    "AwardTotal": "amount_cents count",
    "BoxPaytable": "name odds version",
    "BoxResult": "net_cents stake_cents",
    "BrokenAt": "chain sequence",
    "CategoryEnum": "",
    "ChainPosition": "chain hash sequence",
    "ChangeApproval": "note second_factor_code",
    "ChangeProposal": "changes reason",
    "ChangeRejection": "note",
    "ChangeStatus": "",
    "ChangeWithdrawal": "note",
    "Contribution": "house_cents meter_cents reserve_cents stake_cents stakes",
    "Correction": (
        "amount_cents award before decided_at decided_by decision_note evidence id pool "
        "proposed_at proposed_by reason reference status target"
    ),
    "CorrectionFigures": "count meter_cents payable_cents pending_cents reserve_cents",
    "CorrectionPage": "count limit offset results",
    "CorrectionProposal": "amount_cents award evidence reason reference target",
    "DeliveryStatus": "",
    "DisplayMeter": (
        "amount_cents as_of currency jackpot_pending last_hit pending_jackpot pool recent_hits "
        "sequence status"
    ),
    "DocumentType": "",
    "EvaluateAnswer": "best_five category rank",
    "EvaluateBody": "cards",
    "EventCode": "",
    "EventRef": "chain hash kind sequence",
    "ExportJob": (
        "created_at download_url error expires_at filters finished_at id requested_by "
        "rows_total rows_written sha256 size_bytes started_at status url"
    ),
    "ExportRequest": "from kind pool status table to",
    "ExportStatus": "",
    "FoldActionEnum": "",
    "Hand": "best_five category",
    "HistoryChart": "",
    "HistoryCorrection": (
        "amount_cents approved_by at award change day meter_after_cents proposed_by reason "
        "reference reserve_after_cents target"
    ),
    "HistoryHit": (
        "amount_cents at award day reset_house_cents reset_reserve_cents round seat status table"
    ),
    "Hit": "amount_cents at kind table",
    "IdentityEnum": "",
    "IntegrityFlag": (
        "adjusted alpha awards checked_at expected family id kind observed pool rounds seats "
        "table table_name tail window_from window_to"
    ),
    "IntegrityFlagPage": "count limit offset results",
    "JournalPage": "count limit offset results",
    "JournalTransfer": "amount_cents at award code credit debit event id pool round",
    "JournalVerification": "latest latest_full running",
    "JsonValue": "",
    "KindEnum": "",
    "Liability": (
        "at checkpoint currency journal meter_above_seed_cents meter_cents orphans_cents "
        "owed_cents payable pending period pool pool_name reserve_cents seed_cents stopped"
    ),
    "LiabilityPeriod": "corrections end granted jackpots life paid start voided",
    "LifeFigures": "moved_in_cents moved_out_cents orphans_final_cents seed_back_cents",
    "Meter": "amount_cents as_of currency pool sequence status",
    "MeterDay": "change_cents closing_cents corrections_cents day",
    "MeterIdentity": "expected_units formula holds meter_units",
    "NameEnum": "",
    "NewPoolTerms": (
        "meter_share_bp name paytable_version reserve_share_bp seed_cents stake_cents "
        "surveillance_required verification_threshold_cents"
    ),
    "Notification": (
        "attempts award created_at delivered_at delivery_id event_id last_attempt_at last_error "
        "last_status next_attempt_at status topic url"
    ),
    "NotificationPage": "count limit offset results",
    "Odds": "category denominator numerator pays",
    "OpenAnswer": "meter opened_at progressive round_id seats state table",
    "OpenAnswerStateEnum": "",
    "OpenBody": "",
    "OpenRounds": "count oldest_stale stale_after_seconds stale_count",
    "OutcomeEnum": "",
    "ParAnswer": "sheets",
    "ParLine": (
        "combinations kind on_top out_of pays pays_cents probability rtp_contribution "
        "share_of_return"
    ),
    "ParSheetBody": (
        "game house_edge house_edge_percent jackpot_cents lines other_bettors paytable_version "
        "rtp rtp_percent stake_cents"
    ),
    "ParSheetBodyGameEnum": "",
    "ParameterChange": (
        "before changes decided_at decided_by decision_note id kind pool proposed_at "
        "proposed_by reason status"
    ),
    "ParameterChangePage": "count limit offset results",
    "PatchedTableChange": "enabled",
    "PaymentMethod": "",
    "Paytables": "progressive stud_bonus stud_raise uth_blind uth_trips",
    "PlayActionEnum": "",
    "PoolConfiguration": (
        "currency house_share_bp id meter_share_bp name paytable reserve_share_bp seed_cents "
        "stake_cents surveillance_required tables verification_threshold_cents"
    ),
    "PoolHistory": (
        "awards corrections currency first_day hits last_day meter pool reconciled "
        "reconciliation settled_rounds settled_stakes stakes time_zone"
    ),
    "PoolLife": "pool reason since status",
    "PoolParameters": (
        "meter_share_bp name paytable_version reserve_share_bp seed_cents stake_cents "
        "surveillance_required verification_threshold_cents"
    ),
    "PoolReport": (
        "awards_by_kind balances currency hit_count house_cents integrity_flags last_hits "
        "meter_cents meter_identity open_rounds pool reconciliation reserve_cents seed_cents "
        "stakes"
    ),
    "PoolReplaceProposal": "changes reason",
    "PoolStatus": "",
    "PoolStatusChange": "reason",
    "PoolStopProposal": "effective_at reason to to_pool voluntary",
    "ProgressiveAwardLine": "amount_cents award jackpot_percent_bp",
    "ProgressiveAwardLineAwardEnum": "",
    "ProgressivePaytable": "awards envy_cents name version",
    "ProgressiveResult": "award fixed_cents stake_cents",
    "ProgressiveResultAwardEnum": "",
    "ProgressiveReturnAnswer": (
        "break_even_jackpot_cents envy_probability expected_return expected_return_cents "
        "jackpot_cents other_bettors paytable_version probabilities rtp rtp_bp rtp_percent "
        "stake_cents"
    ),
    "Ratio": "denominator numerator",
    "Reconciliation": (
        "anchors chains daily events finished_at first_broken id ok pool_count pools "
        "problem_count problems run_key started_at transfers"
    ),
    "ReconciliationBroken": "chain sequence",
    "ReconciliationPage": "count limit offset results",
    "ReconciliationPool": "balances expected_units identity meter_cents meter_units pool",
    "ReconciliationStatus": "daily finished_at first_problem id ok problem_count",
    "ReferralDecided": "decided_at decided_by outcome reason",
    "ReferralOutcome": "",
    "ReportHit": "amount_cents at award round seat status table",
    "ResultAnswer": (
        "awards board dealer dealer_hand dealer_qualifies meter round_id seats settled_at state "
        "table"
    ),
    "ResultAnswerStateEnum": "",
    "ResultBody": "",
    "Review": "camera decision from id note reason reviewed_at reviewer to verdict",
    "RoundAward": "amount_cents id kind seat sequence status",
    "RoundDetail": "closed opened round_id state table",
    "RoundPage": "count limit offset results stale_after_seconds table",
    "RoundStateEnum": "",
    "RoundSummary": (
        "age_seconds closed_at opened_at progressive_cents progressive_stakes round_id seats "
        "stale state"
    ),
    "SecondPersonCode": "second_factor_code",
    "Settlement": "boxes dealer_hand dealer_qualifies net_cents outcome player_hand progressive",
    "SignificantEvent": "actor chain code detail hash kind name occurred_at pool sequence table",
    "SignificantEventPage": "count limit offset results",
    "StakeDay": "count day refunded_cents refunded_count stakes_cents",
    "StakeTotals": "count in_cents refunded_cents",
    "StaleRound": "age_seconds opened_at progressive_cents round_id table table_name",
    "StudBetsBody": "ante_cents bonus_cents",
    "StudBuy": "action discard draw",
    "StudBuyActionEnum": "",
    "StudFold": "action",
    "StudOpen": "round_id seats",
    "StudRaise": "action",
    "StudRaiseActionEnum": "",
    "StudResult": "dealer seats",
    "StudSeatBets": "bets seat",
    "StudSeatPlay": "cards decision seat",
    "StudSeatSettlement": (
        "boxes cards dealer_hand dealer_qualifies decision net_cents outcome player_hand "
        "progressive seat"
    ),
    "StudSettleBody": "bets dealer decision player",
    "TableAnswer": "enabled game id name open_rounds pool seats",
    "TableAnswerGameEnum": "",
    "TableMoveProposal": "pool reason",
    "TargetEnum": "",
    "TerminalAnswer": "created_at id name prefix revoked_at table",
    "TerminalIssue": "name reason revoke_others",
    "TerminalIssued": "change created_at id name prefix revoked_at table token",
    "TerminalList": "terminals",
    "ToEnum": "",
    "TransferCode": "",
    "UthBetsBody": "ante_cents blind_cents progressive_cents trips_cents",
    "UthFold": "action",
    "UthOpen": "round_id seats",
    "UthPlayFlop": "action multiple street",
    "UthPlayFlopMultipleEnum": "",
    "UthPlayFlopStreetEnum": "",
    "UthPlayPreflop": "action multiple street",
    "UthPlayPreflopMultipleEnum": "",
    "UthPlayPreflopStreetEnum": "",
    "UthPlayRiver": "action multiple street",
    "UthPlayRiverMultipleEnum": "",
    "UthPlayRiverStreetEnum": "",
    "UthResult": "board dealer seats",
    "UthSeatBets": "bets seat",
    "UthSeatPlay": "cards decision seat",
    "UthSeatSettlement": (
        "boxes cards dealer_hand dealer_qualifies decision net_cents outcome player_hand "
        "progressive seat"
    ),
    "UthSettleBody": "bets board dealer decision player",
    "Verdict": "",
    "VerificationRun": (
        "chains checkpoint created_at events_checked events_total failure finished_at "
        "first_broken full id ok problem_count problems requested_by started_at started_from "
        "status transfers_checked trigger url"
    ),
    "VerificationStatus": "",
    "VerificationTrigger": "",
    "VoidAnswer": "meter progressive_refund_cents reason round_id state table voided_at",
    "VoidAnswerStateEnum": "",
    "VoidBody": "reason",
    "VoidCell": "expected flag refunded_cents refunded_stakes rounds voids",
    "VoidShift": "day end index rounds start voids",
    "VoidTable": "shifts table table_name window",
    "VoidWatch": (
        "currency flags min_rounds pool shift_hours shifts tables time_zone window_from window_to"
    ),
    "WinnerIdentity": "date_of_birth document_number document_type name nationality",
    "WinnerRecord": (
        "award date_of_birth document_number document_type keep_until name nationality "
        "recorded_at recorded_by"
    ),
    # The session registers, models 8 and 8 ter (tables.bodies.registers).
    "DisplayedLine": (
        "change_cents corrections corrections_cents currency displayed_cents pool pool_name status"
    ),
    "DisplayedRegister": "club first_day last_day sessions totals",
    "DisplayedSession": "closed_at club_day lines session",
    "DisplayedTotal": (
        "change_cents corrections corrections_cents currency last_displayed_cents pool "
        "pool_name sessions"
    ),
    "DropCountLine": "confirmed_by counted_by counted_cents difference_cents expected_cents",
    "WithheldLine": (
        "currency drop_count house_cents meter_cents pool pool_name reserve_cents rounds stakes "
        "stakes_cents table table_name voided voided_cents withheld_cents"
    ),
    "WithheldRegister": "club first_day last_day sessions total",
    "WithheldSession": "closed_at club_day lines session total",
    "WithheldTotal": (
        "boxes boxes_confirmed counted_cents difference_cents house_cents meter_cents "
        "reserve_cents rounds stakes stakes_cents voided voided_cents withheld_cents"
    ),
    "Error": "error",
    # The club's sessions (tables.bodies.sessions)
    "DropCountBody": (
        "confirmed confirmed_at confirmed_by counted counted_at counted_by counted_cents "
        "difference_cents expected_cents table"
    ),
    "DropCountConfirmation": "counted_cents second_factor_code",
    "DropCountEntry": "counted_cents",
    "NoBody": "",
    "SessionBody": (
        "closed_at closed_by closed_how club_day drops id number opened_at opened_by pools "
        "status tables"
    ),
    "SessionPage": "count limit offset results",
    "SessionPoolLine": "corrections corrections_cents displayed_cents meter_version pool status",
    "SessionSummary": (
        "closed_at closed_by closed_how club_day id number opened_at opened_by status"
    ),
    "SessionTableLine": (
        "house_cents meter_cents pool reserve_cents rounds stakes stakes_cents table voided "
        "voided_cents withheld_cents"
    ),
    # The code proved (compliance 59).
    "CodeCheckResult": "",
    "CodeDigest": "approved_sha256 installed_sha256 last_checked_at last_result matches",
    # Notices and the register of orphans (compliance 57, 58).
    "Addressee": "",
    "ChannelEnum": "",
    "Notice": (
        "addressee cause change channel created_at deadline id overdue pool reference sent_at "
        "sent_by text"
    ),
    "NoticeCause": "",
    "NoticePage": "count limit offset results",
    "NoticeSending": "channel reference sent_at",
    "OrphanLine": (
        "deadline decision final_at orphans_cents owed_cents pool pool_name recovered_at "
        "recovered_by recovered_into recovery stopped_at"
    ),
    "OrphanRecovery": (
        "decided_at decided_by decision_note id orphans_cents pool proposed_at proposed_by reason "
        "status to_pool"
    ),
    "OrphanRecoveryProposal": "reason to_pool",
    "OrphanRegister": "results",
}

#: Every operation of the schema by its id (what generated clients call their methods), with
#: its parameters' names (path, query string and headers; sorted, space-separated).
OPERATIONS = {
    "award_approve": "award",
    "award_export": "from kind pool status table to",
    "award_export_download": "export",
    "award_export_get": "export",
    "award_export_start": "",
    "award_list": "If-None-Match from kind limit offset pool status table to",
    "award_pay": "award",
    "award_referral_decide": "award",
    "award_register": "format from to",
    "award_review": "award",
    "award_verify": "award",
    "award_void": "award",
    "award_void_cancel": "award",
    "award_void_confirm": "award",
    "award_winner": "award",
    "event_list": "code from limit offset pool table to",
    "integrity_flags": "kind limit offset pool table",
    "journal_list": "code from limit offset pool round to",
    "journal_verification_get": "verification",
    "journal_verify": "",
    "journal_verify_start": "",
    "notification_list": "limit offset status url",
    "pool_change_approve": "change pool",
    "pool_change_list": "limit offset pool status",
    "pool_change_propose": "pool",
    "pool_change_reject": "change pool",
    "pool_change_withdraw": "change pool",
    "pool_correction_approve": "change pool",
    "pool_correction_list": "limit offset pool status",
    "pool_correction_propose": "pool",
    "pool_correction_reject": "change pool",
    "pool_correction_withdraw": "change pool",
    "pool_detail": "pool",
    "pool_history": "from pool to",
    "pool_history_csv": "chart from pool to",
    "pool_liability": "at format from pool",
    "pool_meter": "If-None-Match pool",
    "pool_report": "pool",
    "pool_replace_propose": "pool",
    "pool_resume": "pool",
    "pool_stop_propose": "pool",
    "pool_suspend": "pool",
    "pool_voids": "pool",
    "reconciliation_get": "reconciliation",
    "reconciliations": "daily limit offset ok",
    # The session registers (tables.api.registers).
    "register_displayed": "format from lang to",
    "register_withheld": "format from lang to",
    "round_detail": "round_id table",
    "round_list": "limit offset state table",
    "round_open": "Idempotency-Key table",
    "round_result": "Idempotency-Key round_id table",
    "round_supervisor_void": "round_id table",
    "round_void": "Idempotency-Key round_id table",
    "rules_evaluate": "",
    "rules_par": "jackpot_cents other_bettors version",
    "rules_paytables": "",
    "rules_progressive_return": "jackpot_cents other_bettors",
    "rules_stud_settle": "",
    "rules_uth_settle": "",
    "table_change": "table",
    "table_detail": "table",
    "table_move_approve": "change table",
    "table_move_propose": "table",
    "table_move_reject": "change table",
    "table_move_withdraw": "change table",
    "terminal_issue_approve": "change table",
    "terminal_issue_propose": "table",
    "terminal_issue_reject": "change table",
    "terminal_issue_withdraw": "change table",
    "terminal_list": "table",
    "terminal_revoke": "table terminal",
    "drop_confirm": "session table",
    "drop_count": "session table",
    "session_close": "session",
    "session_get": "session",
    "session_list": "from limit offset to",
    "session_open": "",
    # The code proved (compliance 59).
    "code_digest": "",
    # Notices and the register of orphans (compliance 57, 58).
    "notice_list": "limit offset pool unsent",
    "notice_sent": "notice",
    "orphan_recovery_approve": "change pool",
    "orphan_recovery_propose": "pool",
    "orphan_recovery_reject": "change pool",
    "orphan_register": "",
}

#: The header of each CSV (and the liability statement's figures' names).
CSV_HEADERS = {
    "export": [
        "award_id",
        "won_at_utc",
        "pool",
        "game",
        "table",
        "round",
        "seat",
        "combination",
        "hole_cards",
        "board",
        "amount_cents",
        "status",
        "verified_by",
        "approved_by",
        "paid_by",
        "paid_at_utc",
        "event_hash",
    ],
    "register": [
        "award_id",
        "paid_at_utc",
        "game",
        "table",
        "round",
        "seat",
        "combination",
        "hole_cards",
        "board",
        "amount_cents",
        "currency",
        "winner_name",
        "payment_method",
        "payment_reference",
        "cashier",
        "approver",
    ],
    "history meter": ["day", "closing_cents", "change_cents", "corrections_cents"],
    "history stakes": ["day", "count", "stakes_cents", "refunded_count", "refunded_cents"],
    "history awards": [
        "kind",
        "observed",
        "voided",
        "amount_cents",
        "expected",
        "expected_decimal",
        "expected_rate",
    ],
    "history hits": [
        "award",
        "at",
        "day",
        "table",
        "round",
        "seat",
        "amount_cents",
        "status",
        "reset_reserve_cents",
        "reset_house_cents",
    ],
    # The session registers, models 8 and 8 ter (tables.club.registers).
    "register withheld": [
        "club_day",
        "session",
        "closed_at_utc",
        "table",
        "pool",
        "currency",
        "rounds",
        "stakes",
        "stakes_cents",
        "meter_cents",
        "reserve_cents",
        "house_cents",
        "voided",
        "voided_cents",
        "withheld_cents",
        "counted_cents",
        "expected_cents",
        "difference_cents",
        "counted_by",
        "confirmed_by",
    ],
    "register displayed": [
        "club_day",
        "session",
        "closed_at_utc",
        "pool",
        "currency",
        "status",
        "displayed_cents",
        "corrections",
        "corrections_cents",
        "change_cents",
    ],
    "liability": ["figure", "value"],
    "liability figures": [
        "at_utc",
        "checkpoint",
        "corrections_count",
        "corrections_meter_cents",
        "corrections_payable_cents",
        "corrections_pending_cents",
        "corrections_reserve_cents",
        "currency",
        "granted_cents",
        "granted_count",
        "jackpots_cents",
        "jackpots_count",
        "journal",
        "life_moved_in_cents",
        "life_moved_out_cents",
        "life_orphans_final_cents",
        "life_seed_back_cents",
        "meter_above_seed_cents",
        "meter_cents",
        "orphans_cents",
        "owed_cents",
        "paid_cents",
        "paid_count",
        "payable_cents",
        "payable_count",
        "pending_cents",
        "pending_count",
        "period_end_utc",
        "period_start_utc",
        "pool",
        "pool_name",
        "reserve_cents",
        "seed_cents",
        "stopped",
        "voided_cents",
        "voided_count",
    ],
}

#: Each event kind the story writes, with its payload's keys (paths, sorted).
EVENTS = {
    "pool.created": (
        "meter_share_bp name paytable_version pool reserve_share_bp seed_cents stake_cents "
        "surveillance_required verification_threshold_cents"
    ),
    "table.created": "game name pool seats table",
    "terminal.bootstrapped": "name prefix revoked revoked_others table terminal token_hash",
    "staff.changed": (
        "after after.id after.is_active after.is_staff after.is_superuser after.roles "
        "after.second_factors after.username before before.id before.is_active before.is_staff "
        "before.is_superuser before.roles before.second_factors before.username user"
    ),
    "staff_token.issued": "expires_at prefix revoked_others token token_hash user user_id",
    "round.opened": (
        "meter_version pool progressive progressive.house_cents progressive.meter_cents "
        "progressive.reserve_cents progressive.stake_cents progressive.stakes round round_id "
        "seats seats[].bets seats[].bets.ante_cents seats[].bets.blind_cents "
        "seats[].bets.progressive_cents seats[].bets.trips_cents seats[].seat table terms "
        "terms.paytable_version terms.stake_cents terms.verification_threshold_cents"
    ),
    "round.settled": (
        "awards awards[].amount_cents awards[].board awards[].game awards[].hole_cards "
        "awards[].id awards[].kind awards[].round_name awards[].seat awards[].sequence "
        "awards[].status awards[].table_name awards[].table_pk awards[].winning_five board "
        "dealer meter_version pool round round_id seats seats[].best_five seats[].cards "
        "seats[].decision seats[].decision.action seats[].decision.multiple "
        "seats[].decision.street seats[].net_cents seats[].seat table"
    ),
    "award.verified": "amount_cents award from kind note round seat to",
    "award.reviewed": (
        "amount_cents award camera footage_from footage_to from kind note reason review round "
        "seat table to verdict"
    ),
    "award.approved": "amount_cents award from kind round seat to",
    "award.paid": (
        "amount_cents award from kind method note reference round seat to winner_digest "
        "winner_identified"
    ),
    "round.voided": "progressive_refund_cents reason round round_id table",
    "table.changed": "after after.enabled before before.enabled table",
    "pool.change_proposed": (
        "before before.name change changes changes.name kind pool proposed_by_id reason subject_id"
    ),
    "pool.changed": (
        "after after.name approved_by before before.name change note pool proposed_at proposed_by"
    ),
    # The club's sessions (tables.club)
    "session.opened": "club_day heads heads.pool-<n> number session",
    "session.closed": (
        "closed_how heads heads.pool-<n> heads.table-<n> number pools pools[].corrections "
        "pools[].corrections_cents pools[].displayed_cents pools[].meter_version pools[].pool "
        "pools[].status session tables tables[].house_cents tables[].meter_cents tables[].pool "
        "tables[].reserve_cents tables[].rounds tables[].stakes tables[].stakes_cents "
        "tables[].table tables[].voided tables[].voided_cents tables[].withheld_cents"
    ),
    "session.drop_counted": "counted_by_id counted_cents expected_cents session table",
    "session.drop_confirmed": (
        "confirmed_by_id counted_by counted_cents difference_cents expected_cents session table"
    ),
    "session.drop_difference": (
        "confirmed_by_id counted_by counted_cents difference_cents expected_cents session table"
    ),
}


def test_the_schema_keeps_its_properties_operation_ids_and_parameters(tmp_path):
    target = tmp_path / "schema.yaml"
    with contextlib.redirect_stderr(io.StringIO()):
        call_command("spectacular", "--file", str(target))
    schema = yaml.safe_load(target.read_text())
    components = {
        name: " ".join(sorted(component.get("properties", {})))
        for name, component in schema["components"]["schemas"].items()
    }
    assert components == COMPONENTS
    operations = {}
    for item in schema["paths"].values():
        shared = [parameter["name"] for parameter in item.get("parameters", [])]
        for operation in item.values():
            if isinstance(operation, dict) and "operationId" in operation:
                own = [parameter["name"] for parameter in operation.get("parameters", [])]
                operations[operation["operationId"]] = " ".join(sorted({*shared, *own}))
    assert operations == OPERATIONS


def _first_line(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    streaming = getattr(response, "streaming", False)
    content = b"".join(response.streaming_content) if streaming else response.content
    return next(csv.reader(io.StringIO(content.decode())))


def _story() -> dict[str, list[str]]:
    """A pool created, a round opened and settled with a jackpot and its envy, the jackpot
    verified, approved and paid, a round voided, a pool's change proposed and applied; then every
    CSV the service writes of it. Returns the CSVs' headers by name."""
    floor = make_floor(1)
    people = api_clients(
        ana="supervisor", bob="supervisor", ida="auditor", adam="admin", alex="admin"
    )
    terminal = floor.uth[0]
    opened = people["ana"].post("/api/v1/sessions", content_type=JSON)
    assert opened.status_code == 201, opened.json()
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    settled = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    )
    assert settled.status_code == 200, settled.json()
    jackpot = settled.json()["awards"][0]["id"]
    step = "/api/v1/awards/{}/{}"
    verified = people["ana"].post(
        step.format(jackpot, "verify"), {"note": "checked"}, content_type=JSON
    )
    assert verified.status_code == 200, verified.json()
    surveilled(jackpot)
    approved = people["bob"].post(step.format(jackpot, "approve"), {}, content_type=JSON)
    assert approved.status_code == 200, approved.json()
    paid = people["ana"].post(step.format(jackpot, "pay"), PAY, content_type=JSON)
    assert paid.status_code == 200, paid.json()
    assert terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]}).status_code == 201
    assert terminal.post("/rounds/r-2/void", {"reason": "misdeal"}).status_code == 200
    session = f"/api/v1/sessions/{opened.json()['id']}"
    assert people["ana"].post(f"{session}/close", content_type=JSON).status_code == 200
    count = f"{session}/tables/{terminal.table_id}/count"
    assert people["ana"].post(count, {"counted_cents": 400}, content_type=JSON).status_code == 200
    confirmed = people["bob"].post(f"{count}/confirm", {"counted_cents": 400}, content_type=JSON)
    assert confirmed.status_code == 200, confirmed.json()  # a difference: SE19
    closed = people["adam"].patch(
        f"/api/v1/tables/{terminal.table_id}", {"enabled": False}, content_type=JSON
    )
    assert closed.status_code == 200, closed.json()  # a pool changes with its tables closed
    changes = f"/api/v1/pools/{floor.pool_id}/changes"
    proposed = people["adam"].post(
        changes, {"changes": {"name": "Main floor"}, "reason": "renamed"}, content_type=JSON
    )
    assert proposed.status_code == 201, proposed.json()
    applied = people["alex"].post(
        f"{changes}/{proposed.json()['id']}/approve", {}, content_type=JSON
    )
    assert applied.status_code == 200, applied.json()

    auditor, now, day = people["ida"], timezone.now(), timedelta(days=1)
    window = {"from": (now - day).isoformat(), "to": (now + day).isoformat()}
    headers = {
        "export": _first_line(auditor.get("/api/v1/awards/export.csv", window)),
        "register": _first_line(
            auditor.get("/api/v1/awards/register", {**window, "format": "csv"})
        ),
    }
    for chart in ("meter", "stakes", "awards", "hits"):
        history = auditor.get(f"/api/v1/pools/{floor.pool_id}/history.csv", {"chart": chart})
        headers[f"history {chart}"] = _first_line(history)
    # The session registers, models 8 and 8 ter (tables.club.registers).
    days = {"from": f"{now - day:%Y-%m-%d}", "to": f"{now:%Y-%m-%d}", "format": "csv"}
    for register in ("withheld", "displayed"):
        answer = auditor.get(f"/api/v1/registers/{register}", days)
        headers[f"register {register}"] = _first_line(answer)
    liability = auditor.get(f"/api/v1/pools/{floor.pool_id}/liability", {"format": "csv"})
    assert liability.status_code == 200, liability.content
    rows = list(csv.reader(io.StringIO(liability.content.decode())))
    # The header, then one figure a line: the figures' names are the CSV's words too (a
    # `journal:<chain>` line per chain, its chain's name after the colon; the digest last).
    headers["liability"] = rows[0]
    headers["liability figures"] = sorted(
        {row[0].split(":")[0] for row in rows[1:] if not row[0].startswith("#")}
    )
    return headers


def _paths(value: object, prefix: str = "") -> set[str]:
    """Every key of a payload, as a path (`awards[].kind`); a key that is a number (an id) is
    `<n>`, and so is a chain key's id (`heads.table-<n>`), since ids differ from run to run."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            word = "<n>" if str(key).isdigit() else re.sub(r"-[0-9]+$", "-<n>", str(key))
            path = f"{prefix}.{word}" if prefix else word
            found |= {path} | _paths(inner, path)
    elif isinstance(value, list):
        for item in value:
            found |= _paths(item, f"{prefix}[]")
    return found


@pytest.mark.django_db
def test_the_csv_headers_event_kinds_and_payload_keys_stay():
    headers = _story()
    assert headers == CSV_HEADERS
    written: dict[str, set[str]] = {}
    for kind, payload in AuditEvent.objects.values_list("kind", "payload"):
        written.setdefault(kind, set()).update(_paths(payload))
    assert {kind: " ".join(sorted(keys)) for kind, keys in written.items()} == EVENTS


# --- The code proved (compliance 59): the start-up gate's two events and their payloads' keys.
CODE_EVENTS = {
    "code.verified": "approved host installed",
    "code.mismatch": "approved host installed",
}


@pytest.mark.django_db(transaction=True)
def test_the_code_checks_events_keep_their_payload_keys(settings):
    from core import code_digest

    for pin in (code_digest.installed(), "0" * 64):
        settings.JACKPOT_CODE_SHA256 = pin
        with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
            call_command("selfcheck", stdout=io.StringIO())
    written: dict[str, set[str]] = {}
    for kind, payload in AuditEvent.objects.filter(kind__in=CODE_EVENTS).values_list(
        "kind", "payload"
    ):
        written.setdefault(kind, set()).update(_paths(payload))
    assert {kind: " ".join(sorted(keys)) for kind, keys in written.items()} == CODE_EVENTS
