"""The pages' URL map, mounted at the root by config.urls: `/floor/...` and `/audit/...`."""

from django.urls import URLPattern, path

from floor import account, audit, floor, registers, sessions, signin, slips

urlpatterns: list[URLPattern] = [
    path("floor/login/", floor.login_page, name="floor-login"),
    path("floor/login/next/", signin.sign_in_step, name="floor-login-step"),
    path("floor/account/", account.account_page, name="floor-account"),
    path("floor/logout/", floor.logout_page, name="floor-logout"),
    path("floor/awards/", floor.award_queue, name="floor-awards"),
    path("floor/awards/<int:award>/slip/", slips.slip_page, name="floor-slip"),
    path("floor/awards/<int:award>/slip.pdf", slips.slip_pdf, name="floor-slip-pdf"),
    path("audit/pools/<int:pool>/", audit.audit_pool, name="audit-pool"),
    # The club's sessions and their drop counts (floor.sessions).
    path("floor/sessions/", sessions.sessions_page, name="floor-sessions"),
    path("floor/sessions/<int:session>/", sessions.session_page, name="floor-session"),
    # The session registers, models 8 and 8 ter (floor.registers).
    path("floor/registers/", registers.registers_page, name="floor-registers"),
]
