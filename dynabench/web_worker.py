"""The web processes' gunicorn worker class: uvicorn's worker with its proxy headers off.

``make run`` (``scripts/run.sh``) and the documented server commands start gunicorn with
``--worker-class dynabench.web_worker.WebWorker``. Uvicorn's own default (``proxy_headers=True``,
trusting ``FORWARDED_ALLOW_IPS``, 127.0.0.1 by default) rewrites the client address from
``X-Forwarded-For`` before the platform sees the request: any client connecting through
localhost, or from an address listed there, could then name itself anew on every request and
dodge the login lockout and the per-address rate limits. Here the server never reads that header;
the platform alone decides which of its addresses to believe, by ``TRUSTED_PROXY_COUNT``
(``dynabench/proxies.py``), and ``X-Forwarded-Proto`` by ``SECURE_PROXY_SSL_HEADER`` in production.

Run without gunicorn, uvicorn takes ``--no-proxy-headers`` for the same effect.
"""

from uvicorn_worker import UvicornWorker


class WebWorker(UvicornWorker):
    """Gunicorn's uvicorn worker, which never rewrites the client address or scheme from proxy headers."""

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "proxy_headers": False}
