"""The client's address behind a configured number of trusted reverse proxies.

One setting, ``TRUSTED_PROXY_COUNT`` (environment variable of the same name, default 0),
says how many proxies in front of the app append to ``X-Forwarded-For``. It feeds both
login lockout (django-axes, ``AXES_CLIENT_IP_CALLABLE``) and the API's rate limits (DRF's
``NUM_PROXIES``, and ``dynabench.throttling``), so rotating that header moves neither.
"""

from django.conf import settings


def client_ip(request) -> str:
    """Return the address of the client that sent ``request`` (a Django or DRF request).

    With ``TRUSTED_PROXY_COUNT = 0`` this is ``REMOTE_ADDR`` and ``X-Forwarded-For`` is
    ignored (a client can write anything there). With ``N > 0`` it is the N-th address
    from the right of ``X-Forwarded-For``: the one the outermost trusted proxy saw (the
    same rule as DRF's ``NUM_PROXIES``). Returns ``""`` when the server gave no address.
    """
    remote = request.META.get("REMOTE_ADDR", "") or ""
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if count <= 0 or not forwarded:
        return remote
    addresses = [a.strip() for a in forwarded.split(",")]
    return addresses[-min(count, len(addresses))] or remote
