from django.urls import path

from jackpot.api import views

urlpatterns = [
    path("pools/<int:pool>", views.PoolDetailView.as_view(), name="pool-detail"),
    path("pools/<int:pool>/meter", views.PoolMeterView.as_view(), name="pool-meter"),
    path("journal/verify", views.JournalVerifyView.as_view(), name="journal-verify"),
]
