"""Signed webhooks: an outbox message posted to every receiver of WEBHOOK_RECEIVERS until each
answers 2xx; its data is what its journal event says, never the row's payload as such. The
scheme (body, headers, `v2` signature over timestamp, delivery id, URL and body, a secret per
receiver, a 300 s replay window): docs/api.md 5.9.

Invariants:
- one delivery row per (message, URL), its id the same on every attempt;
- a send is claimed by one UPDATE with a lease and its outcome written naming that token: a 2xx
  marks it delivered, never sent again; anything else backs off;
- the HTTP request is made with no transaction open and no row lock held;
- a worker killed after the receiver's 2xx resends with the same delivery id (at least once).

The scheme's reasons: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, DateTimeField, ExpressionWrapper, F, Min, Q
from django.db.models.functions import Now

from jackpot.models import DeliveryStatus, OutboxMessage, WebhookDelivery

logger = logging.getLogger(__name__)

REPLAY_WINDOW_SECONDS = 300  # what receivers are told to enforce (docs/api.md)
ERROR_CHARACTERS = 500  # of an error or an answer kept on the delivery
USER_AGENT = "jackpot-webhooks/1"


def _in(seconds: float) -> ExpressionWrapper:
    """The database's clock `seconds` from now (every time of a delivery is the database's)."""
    return ExpressionWrapper(Now() + timedelta(seconds=seconds), output_field=DateTimeField())


def backoff_seconds(attempts: int) -> int:
    """The wait after the `attempts`-th failed attempt: WEBHOOK_BACKOFF_SECONDS doubled per
    attempt, at most WEBHOOK_BACKOFF_MAX_SECONDS."""
    base, most = settings.WEBHOOK_BACKOFF_SECONDS, settings.WEBHOOK_BACKOFF_MAX_SECONDS
    return int(min(most, base * 2 ** min(max(attempts - 1, 0), 30)))


def event_body(message: OutboxMessage, data: Mapping[str, Any]) -> bytes:
    """The bytes posted for `message` whose data is `data` (what its journal event says,
    `jackpot.audit.outbox_journal`): the same on every attempt and to every URL."""
    event = {
        "id": message.key,
        "type": message.topic,
        "created_at": message.created_at.isoformat().replace("+00:00", "Z"),
        "data": data,
    }
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed_content(*, timestamp: int, delivery_id: uuid.UUID, url: str, body: bytes) -> bytes:
    """What a signature covers: `{timestamp}\n{delivery id}\n{url}\n` then the raw body."""
    return f"{timestamp}\n{delivery_id}\n{url}\n".encode() + body


def signature(secret: str, *, timestamp: int, delivery_id: uuid.UUID, url: str, body: bytes) -> str:
    """hex HMAC-SHA256 over `signed_content` keyed with the receiver's `secret`."""
    signed = signed_content(timestamp=timestamp, delivery_id=delivery_id, url=url, body=body)
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signed_headers(
    *,
    url: str,
    delivery_id: uuid.UUID,
    event_id: str,
    attempt: int,
    body: bytes,
    timestamp: int,
) -> dict[str, str]:
    """The headers of one attempt to `url`, signed with that receiver's own secret."""
    secret = settings.WEBHOOK_RECEIVERS[url]
    signed = signature(secret, timestamp=timestamp, delivery_id=delivery_id, url=url, body=body)
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Jackpot-Delivery": str(delivery_id),
        "Jackpot-Event": event_id,
        "Jackpot-Attempt": str(attempt),
        "Jackpot-Timestamp": str(timestamp),
        "Jackpot-Signature": f"v2={signed}",
    }


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a 2xx: the signed body is never re-posted elsewhere."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no answer (refused, timed out, DNS...)
    error: str  # empty on a 2xx

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """One POST, no retry, no redirect, WEBHOOK_TIMEOUT_SECONDS at most."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _opener.open(request, timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as response:
            status = int(response.status)
            text = response.read(ERROR_CHARACTERS).decode(errors="replace")
    except urllib.error.HTTPError as error:  # an answer, not 2xx
        text = error.read(ERROR_CHARACTERS).decode(errors="replace") if error.fp else ""
        return Answer(error.code, f"HTTP {error.code}: {text}"[:ERROR_CHARACTERS])
    except Exception as error:  # no answer: refused, reset, timed out, bad URL
        return Answer(None, f"{type(error).__name__}: {error}"[:ERROR_CHARACTERS])
    if 200 <= status < 300:
        return Answer(status, "")
    return Answer(status, f"HTTP {status}: {text}"[:ERROR_CHARACTERS])


@dataclass(frozen=True)
class Delivered:
    """Where a message's deliveries stand after a relay."""

    done: bool  # every delivery to a configured URL acknowledged (or no URL configured)
    next_attempt_at: datetime | None  # the earliest retry still waiting


def deliver(message: OutboxMessage, data: Mapping[str, Any]) -> Delivered:
    """Post `message`, its data `data`, to every configured receiver whose delivery is pending
    and due; say whether all are delivered. Safe to run at once in several workers (each send is
    claimed). The caller vouched for `data` (`jackpot.notifications.outbox.relay`)."""
    urls = list(settings.WEBHOOK_RECEIVERS)
    # One row per (message, URL), made at the first relay; a second relay makes none.
    WebhookDelivery.objects.bulk_create(
        [WebhookDelivery(message=message, url=url) for url in urls], ignore_conflicts=True
    )
    body = event_body(message, data)
    pending = WebhookDelivery.objects.filter(
        message=message, url__in=urls, status=DeliveryStatus.PENDING
    )
    for delivery_pk in pending.order_by("pk").values_list("pk", flat=True):
        _send(delivery_pk, message, body)
    left = pending.aggregate(count=Count("pk"), next_at=Min("next_attempt_at"))
    return Delivered(done=left["count"] == 0, next_attempt_at=left["next_at"])


def _send(delivery_pk: int, message: OutboxMessage, body: bytes) -> None:
    token = uuid.uuid4()
    claimed = (
        WebhookDelivery.objects.filter(
            pk=delivery_pk, status=DeliveryStatus.PENDING, next_attempt_at__lte=Now()
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=Now()))
        .update(
            claim=token,
            claimed_until=_in(settings.OUTBOX_LEASE_SECONDS),
            attempts=F("attempts") + 1,
            last_attempt_at=Now(),
        )
    )
    if not claimed:
        return  # delivered, not due yet, or another worker is sending it
    delivery = WebhookDelivery.objects.only("delivery_id", "url", "attempts").get(pk=delivery_pk)
    headers = signed_headers(
        url=delivery.url,
        delivery_id=delivery.delivery_id,
        event_id=message.key,
        attempt=delivery.attempts,
        body=body,
        timestamp=int(time.time()),
    )
    answer = post(delivery.url, body, headers)
    mine = WebhookDelivery.objects.filter(
        pk=delivery_pk, claim=token, status=DeliveryStatus.PENDING
    )
    if answer.ok:
        recorded = mine.update(
            status=DeliveryStatus.DELIVERED,
            last_status=answer.status,
            last_error="",
            delivered_at=Now(),
            claim=None,
            claimed_until=None,
        )
        logger.info(
            "webhook %s (%s) delivered to %s, attempt %s",
            delivery.delivery_id,
            message.key,
            delivery.url,
            delivery.attempts,
        )
    else:
        wait = backoff_seconds(delivery.attempts)
        recorded = mine.update(
            last_status=answer.status,
            last_error=answer.error,
            next_attempt_at=_in(wait),
            claim=None,
            claimed_until=None,
        )
        logger.warning(
            "webhook %s (%s) to %s failed, attempt %s (%s): again in %s s",
            delivery.delivery_id,
            message.key,
            delivery.url,
            delivery.attempts,
            answer.error,
            wait,
        )
    if not recorded:  # the lease ran out while the receiver took its time: another send took it
        logger.warning("webhook %s: its claim was taken over; outcome not recorded", delivery_pk)
