"""A winner's identity and payment bodies for the tests that pay awards.

Every jackpot of the test floors (seed EUR 10,000) is above the identification threshold
(EUR 2,000, `WINNER_IDENTIFICATION_THRESHOLD_CENTS`): paying it takes the winner's identity.
The name and document number are distinctive, so a test can search every output for them.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from jackpot.awards.workflow import award_pay
from jackpot.bodies.awards import WinnerIdentityBody
from jackpot.models import Award, PaymentMethod

NAME = "Zoé Quintanar-Belmont"
DOCUMENT = "QX7K4Z91"
WINNER = {
    "name": NAME,
    "date_of_birth": "1981-04-23",
    "document_type": "passport",
    "document_number": DOCUMENT,
    "nationality": "FR",
}
#: A payment in cash with the winner identified: the body of POST /api/v1/awards/{id}/pay.
PAY = {"method": "cash", "note": "paid at the cage", "winner": WINNER}
#: A payment in cash without an identity (an award under the threshold).
PAY_CASH = {"method": "cash"}


def winner() -> WinnerIdentityBody:
    return WinnerIdentityBody.model_validate(WINNER)


def pay_identified(award_id: int, user: User) -> Award:
    """Pay an award in cash with the winner identified (as a cashier does for a jackpot)."""
    return award_pay(award_id=award_id, user=user, method=PaymentMethod.CASH, winner=winner())
