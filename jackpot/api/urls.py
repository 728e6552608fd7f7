from django.urls import path

from jackpot.api import awards, exports, views

urlpatterns = [
    path("pools/<int:pool>", views.PoolDetailView.as_view(), name="pool-detail"),
    path("pools/<int:pool>/meter", views.PoolMeterView.as_view(), name="pool-meter"),
    path("pools/<int:pool>/report", views.PoolReportView.as_view(), name="pool-report"),
    path("journal", views.JournalView.as_view(), name="journal"),
    path("journal/verify", views.JournalVerifyView.as_view(), name="journal-verify"),
    path("awards", awards.AwardListView.as_view(), name="award-list"),
    path("awards/export.csv", awards.AwardExportView.as_view(), name="award-export"),
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
]
