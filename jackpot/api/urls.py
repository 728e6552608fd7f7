from django.urls import path

from jackpot.api import (
    awards,
    changes,
    code,
    corrections,
    exports,
    liability,
    notifications,
    orphans,
    views,
)

urlpatterns = [
    # Notices and the register of orphans (jackpot.api.orphans, compliance 57, 58).
    path("notices", orphans.NoticesView.as_view(), name="notices"),
    path("notices/<int:notice>/sent", orphans.NoticeSentView.as_view(), name="notice-sent"),
    path("orphans", orphans.OrphansView.as_view(), name="orphans"),
    path(
        "pools/<int:pool>/orphans/recoveries",
        orphans.OrphanRecoveryView.as_view(),
        name="orphan-recoveries",
    ),
    path(
        "pools/<int:pool>/orphans/recoveries/<int:change>/approve",
        orphans.OrphanRecoveryApproveView.as_view(),
        name="orphan-recovery-approve",
    ),
    path(
        "pools/<int:pool>/orphans/recoveries/<int:change>/reject",
        orphans.OrphanRecoveryRejectView.as_view(),
        name="orphan-recovery-reject",
    ),
    path("pools/<int:pool>", views.PoolDetailView.as_view(), name="pool-detail"),
    path("pools/<int:pool>/meter", views.PoolMeterView.as_view(), name="pool-meter"),
    path(
        "pools/<int:pool>/liability",
        liability.PoolLiabilityView.as_view(),
        name="pool-liability",
    ),
    path("pools/<int:pool>/changes", changes.PoolChangesView.as_view(), name="pool-changes"),
    path("pools/<int:pool>/suspend", changes.PoolSuspendView.as_view(), name="pool-suspend"),
    path("pools/<int:pool>/resume", changes.PoolResumeView.as_view(), name="pool-resume"),
    path("pools/<int:pool>/stop", changes.PoolStopView.as_view(), name="pool-stop"),
    path("pools/<int:pool>/replace", changes.PoolReplaceView.as_view(), name="pool-replace"),
    path(
        "pools/<int:pool>/changes/<int:change>/approve",
        changes.PoolChangeApproveView.as_view(),
        name="pool-change-approve",
    ),
    path(
        "pools/<int:pool>/changes/<int:change>/reject",
        changes.PoolChangeRejectView.as_view(),
        name="pool-change-reject",
    ),
    path(
        "pools/<int:pool>/changes/<int:change>/withdraw",
        changes.PoolChangeWithdrawView.as_view(),
        name="pool-change-withdraw",
    ),
    path(
        "pools/<int:pool>/corrections",
        corrections.PoolCorrectionsView.as_view(),
        name="pool-corrections",
    ),
    path(
        "pools/<int:pool>/corrections/<int:change>/approve",
        corrections.PoolCorrectionApproveView.as_view(),
        name="pool-correction-approve",
    ),
    path(
        "pools/<int:pool>/corrections/<int:change>/reject",
        corrections.PoolCorrectionRejectView.as_view(),
        name="pool-correction-reject",
    ),
    path(
        "pools/<int:pool>/corrections/<int:change>/withdraw",
        corrections.PoolCorrectionWithdrawView.as_view(),
        name="pool-correction-withdraw",
    ),
    path("journal", views.JournalView.as_view(), name="journal"),
    path("events", views.SignificantEventListView.as_view(), name="event-list"),
    path("awards", awards.AwardListView.as_view(), name="award-list"),
    path("notifications", notifications.NotificationListView.as_view(), name="notification-list"),
    path("awards/export.csv", awards.AwardExportView.as_view(), name="award-export"),
    path("awards/register", awards.AwardRegisterView.as_view(), name="award-register"),
    path("awards/<int:award>/winner", awards.AwardWinnerView.as_view(), name="award-winner"),
    path("awards/exports", exports.ExportJobListView.as_view(), name="award-export-jobs"),
    path("awards/exports/<int:export>", exports.ExportJobView.as_view(), name="award-export-job"),
    path(
        "awards/exports/<int:export>/download",
        exports.ExportJobDownloadView.as_view(),
        name="award-export-download",
    ),
    path("awards/<int:award>/verify", awards.AwardVerifyView.as_view(), name="award-verify"),
    path("awards/<int:award>/approve", awards.AwardApproveView.as_view(), name="award-approve"),
    path("awards/<int:award>/pay", awards.AwardPayView.as_view(), name="award-pay"),
    path("awards/<int:award>/void", awards.AwardVoidView.as_view(), name="award-void"),
    path("awards/<int:award>/review", awards.AwardReviewView.as_view(), name="award-review"),
    path("awards/<int:award>/referral", awards.AwardReferralView.as_view(), name="award-referral"),
    path(
        "awards/<int:award>/void/confirm",
        awards.AwardVoidConfirmView.as_view(),
        name="award-void-confirm",
    ),
    path(
        "awards/<int:award>/void/cancel",
        awards.AwardVoidCancelView.as_view(),
        name="award-void-cancel",
    ),
    # The code proved (compliance 59): both digests and the gate's last check.
    path("code", code.CodeDigestView.as_view(), name="code-digest"),
]
