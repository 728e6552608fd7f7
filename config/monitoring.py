"""The HTTP side of the metrics: every request timed by URL pattern, and GET /metrics.

Invariants:
- a request is labelled with its URL pattern (`api/v1/tables/<int:table>/rounds`), its method
  (one of `METHODS`, else `other`) and its status: never with a raw path, so a client sending
  random paths cannot make the series grow; a path no pattern matched is `<unmatched>`;
- /metrics answers only clients whose address (REMOTE_ADDR: the peer, never a header a client
  could forge) is in METRICS_ALLOWED_NETS (loopback by default), anyone else gets 403 in the API's
  error shape; behind nginx the peer is nginx, which keeps /metrics off its public listener;
- /metrics is not part of the API: a plain Django view, absent from the OpenAPI schema;
- a scrape answers even with the database down (jackpot.reporting.gauges leaves its figures out).
"""

from __future__ import annotations

import functools
import ipaddress
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core import metrics
from core.errors import error_body
from jackpot.reporting.gauges import DatabaseFigures

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "<unmatched>"


class MetricsMiddleware:
    """Times each request from here (second in MIDDLEWARE, after the request id) to its
    response, by URL pattern, method and status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        match = request.resolver_match
        route = match.route if match is not None else UNMATCHED
        method = request.method if request.method in METHODS else "other"
        metrics.HTTP_REQUEST_SECONDS.labels(route, method, str(response.status_code)).observe(
            elapsed
        )
        return response


@functools.cache
def _networks(
    allowed: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(net, strict=False) for net in allowed)


def _allowed(address: str) -> bool:
    try:
        client = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(client, ipaddress.IPv6Address) and client.ipv4_mapped is not None:
        client = client.ipv4_mapped  # ::ffff:127.0.0.1 on a dual-stack socket
    return any(client in net for net in _networks(tuple(settings.METRICS_ALLOWED_NETS)))


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus's text format: the processes' counters and the database's figures."""
    if not _allowed(request.META.get("REMOTE_ADDR", "")):
        body = error_body(
            "permission",
            "permission_denied",
            "/metrics answers only the addresses of METRICS_ALLOWED_NETS.",
            None,
        )
        return JsonResponse(body, status=403)
    return HttpResponse(metrics.exposition(DatabaseFigures()), content_type=metrics.CONTENT_TYPE)
