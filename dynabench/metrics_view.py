"""``/metrics``: the platform's metrics in the Prometheus text format (``dynabench.metrics.exposition``).

Served to a client on loopback (the address ``dynabench.proxies.client_ip`` believes, so a request
relayed by a trusted proxy counts from where it came), or to anyone presenting
``Authorization: Bearer <DYNABENCH_METRICS_TOKEN>`` when that setting is set; anyone else gets 403.
404 when metrics are off (``DYNABENCH_METRICS=0``).
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseForbidden

from dynabench import metrics
from dynabench.proxies import client_ip


def may_scrape(request) -> bool:
    """Whether ``request`` may read the metrics: from loopback, or with the bearer token when one is set."""
    token = getattr(settings, "DYNABENCH_METRICS_TOKEN", "")
    if token:
        sent = request.META.get("HTTP_AUTHORIZATION", "")
        if sent.startswith("Bearer ") and hmac.compare_digest(sent[7:].strip().encode(), token.encode()):
            return True
    try:
        return ipaddress.ip_address(client_ip(request)).is_loopback
    except ValueError:  # no address (a Unix socket) or a malformed one
        return False


def metrics_view(request):
    """The metrics of every web process and worker, and the scrape-time sources (see the module docstring)."""
    if not metrics.enabled():
        raise Http404("Metrics are off (DYNABENCH_METRICS=0).")
    if not may_scrape(request):
        return HttpResponseForbidden("Metrics are served to loopback, or with Authorization: Bearer <DYNABENCH_METRICS_TOKEN>.",
                                     content_type="text/plain")
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)
