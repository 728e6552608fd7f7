from django.urls import path

from tables.api import (
    administration,
    history,
    integrity,
    reconciliations,
    registers,
    rules_views,
    sessions,
    verifications,
    views,
)

urlpatterns = [
    path("pools/<int:pool>/report", reconciliations.PoolReportView.as_view(), name="pool-report"),
    path("journal/verify", verifications.JournalVerifyView.as_view(), name="journal-verify"),
    path(
        "journal/verifications/<int:verification>",
        verifications.JournalVerificationView.as_view(),
        name="journal-verification",
    ),
    path("tables/<int:table>", administration.TableView.as_view(), name="table-detail"),
    path(
        "tables/<int:table>/terminals",
        administration.TerminalsView.as_view(),
        name="table-terminals",
    ),
    path(
        "tables/<int:table>/terminals/<int:terminal>/revoke",
        administration.TerminalRevokeView.as_view(),
        name="terminal-revoke",
    ),
    path(
        "tables/<int:table>/terminals/issues/<int:change>/approve",
        administration.TerminalIssueApproveView.as_view(),
        name="terminal-issue-approve",
    ),
    path(
        "tables/<int:table>/terminals/issues/<int:change>/reject",
        administration.TerminalIssueRejectView.as_view(),
        name="terminal-issue-reject",
    ),
    path(
        "tables/<int:table>/terminals/issues/<int:change>/withdraw",
        administration.TerminalIssueWithdrawView.as_view(),
        name="terminal-issue-withdraw",
    ),
    path("tables/<int:table>/moves", administration.TableMovesView.as_view(), name="table-moves"),
    path(
        "tables/<int:table>/moves/<int:change>/approve",
        administration.TableMoveApproveView.as_view(),
        name="table-move-approve",
    ),
    path(
        "tables/<int:table>/moves/<int:change>/reject",
        administration.TableMoveRejectView.as_view(),
        name="table-move-reject",
    ),
    path(
        "tables/<int:table>/moves/<int:change>/withdraw",
        administration.TableMoveWithdrawView.as_view(),
        name="table-move-withdraw",
    ),
    path("tables/<int:table>/rounds", views.TableRoundsView.as_view(), name="table-rounds"),
    path(
        "tables/<int:table>/rounds/<str:round_id>",
        views.RoundDetailView.as_view(),
        name="round-detail",
    ),
    path(
        "tables/<int:table>/rounds/<str:round_id>/result",
        views.RoundResultView.as_view(),
        name="round-result",
    ),
    path(
        "tables/<int:table>/rounds/<str:round_id>/void",
        views.RoundVoidView.as_view(),
        name="round-void",
    ),
    path(
        "tables/<int:table>/rounds/<str:round_id>/supervisor-void",
        administration.RoundSupervisorVoidView.as_view(),
        name="round-supervisor-void",
    ),
    path("rules/evaluate", rules_views.EvaluateView.as_view(), name="rules-evaluate"),
    path("rules/uth/settle", rules_views.UthSettleView.as_view(), name="rules-uth-settle"),
    path("rules/stud/settle", rules_views.StudSettleView.as_view(), name="rules-stud-settle"),
    path("rules/paytables", rules_views.PaytablesView.as_view(), name="rules-paytables"),
    path(
        "rules/progressive/return",
        rules_views.ProgressiveReturnView.as_view(),
        name="rules-progressive-return",
    ),
    path("rules/par", rules_views.ParView.as_view(), name="rules-par"),
    path("pools/<int:pool>/history", history.PoolHistoryView.as_view(), name="pool-history"),
    path(
        "pools/<int:pool>/history.csv",
        history.PoolHistoryCsvView.as_view(),
        name="pool-history-csv",
    ),
    path("integrity/flags", integrity.IntegrityFlagsView.as_view(), name="integrity-flags"),
    path("pools/<int:pool>/voids", integrity.PoolVoidsView.as_view(), name="pool-voids"),
    path("sessions", sessions.SessionsView.as_view(), name="sessions"),
    path("sessions/<int:session>", sessions.SessionView.as_view(), name="session-detail"),
    path("sessions/<int:session>/close", sessions.SessionCloseView.as_view(), name="session-close"),
    path(
        "sessions/<int:session>/tables/<int:table>/count",
        sessions.DropCountView.as_view(),
        name="drop-count",
    ),
    path(
        "sessions/<int:session>/tables/<int:table>/count/confirm",
        sessions.DropConfirmView.as_view(),
        name="drop-confirm",
    ),
    path("reconciliations", reconciliations.ReconciliationsView.as_view(), name="reconciliations"),
    path(
        "reconciliations/<int:reconciliation>",
        reconciliations.ReconciliationView.as_view(),
        name="reconciliation-detail",
    ),
    # The session registers, models 8 and 8 ter (tables.api.registers).
    path(
        "registers/withheld",
        registers.WithheldRegisterView.as_view(),
        name="register-withheld",
    ),
    path(
        "registers/displayed",
        registers.DisplayedRegisterView.as_view(),
        name="register-displayed",
    ),
]
