"""The API's scoped rate limits (``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``)."""

from rest_framework import throttling
from rest_framework.settings import api_settings

from dynabench.proxies import client_ip


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    """DRF's ``ScopedRateThrottle`` with the scope chosen per action.

    A view sets ``throttle_scopes = {"create": "examples"}`` (action → scope) and/or
    ``throttle_scope`` (any action). Rates come from ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``,
    read on each request (so a settings override applies), counted per user, or per IP
    for anonymous requests, in the default cache (Redis). The IP is the client's address
    behind ``TRUSTED_PROXY_COUNT`` proxies (``dynabench.proxies.client_ip``), so a client
    cannot pick a fresh bucket by writing ``X-Forwarded-For``.
    """

    def get_ident(self, request):
        return client_ip(request)

    def allow_request(self, request, view):
        scopes = getattr(view, "throttle_scopes", {}) or {}
        self.scope = scopes.get(getattr(view, "action", None)) or getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return throttling.SimpleRateThrottle.allow_request(self, request, view)
