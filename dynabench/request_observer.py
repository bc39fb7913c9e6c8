"""The outermost middleware: a request id for each request, its metrics and its one JSON log line.

For every request (pages, API, static files, ``/metrics`` itself):

1. binds a request id (``dynabench/request_ids.py``): a new one, or the ``X-Request-ID`` a trusted
   proxy sent (only with ``TRUSTED_PROXY_COUNT`` > 0; a client's own header is never believed);
2. runs the rest of the chain, sync or async as the view is (no thread hop for async views);
3. records its time to the response's headers by URL name, method and status
   (``dynabench.metrics.record_request``), sets ``X-Request-ID`` on the response and logs
   ``{"event": "request", "request_id", "user_id", "route", "method", "status", "duration_ms"}``;
4. a streamed response (chat turns, exports) keeps the id bound until its last chunk, and a
   server-sent-events stream counts in ``dynabench_http_streams_open`` while it is sent;
5. every few seconds, samples this process's database pool into gauges.

With ``DYNABENCH_METRICS=0`` it records no metric but still sets the id and logs the line.
"""

from __future__ import annotations

import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.utils.functional import empty

from dynabench import metrics, request_ids

#: Seconds between two samples of this process's database pool.
POOL_SAMPLE_EVERY_S = 5.0
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def route_of(request) -> str:
    """The request's bounded route label: its URL name (``namespace:name``), ``static`` for static
    files, ``unnamed`` for a URL without a name, ``unmatched`` when no URL matched."""
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return match.view_name or "unnamed"
    if request.path_info.startswith(settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL):
        return "static"
    return "unmatched"


def user_id_of(request) -> int | None:
    """The id of the signed-in user the request already loaded, or None; never loads the session for it."""
    for name in ("user", "_cached_user", "_acached_user"):
        user = request.__dict__.get(name)
        if user is None:
            continue
        user = user.__dict__.get("_wrapped", user)  # a lazy user not evaluated yet is ``empty``
        if user is not empty and getattr(user, "is_authenticated", False):
            return user.pk
    return None


def _incoming_id(request) -> str:
    if int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0) > 0:
        sent = request.META.get("HTTP_X_REQUEST_ID")
        if request_ids.well_formed(sent):
            return sent
    return request_ids.new_id()


_last_pool_sample = 0.0


def _sample_pool(now: float) -> None:
    """Record this process's PostgreSQL pool (psycopg_pool's counts), at most every ``POOL_SAMPLE_EVERY_S``."""
    global _last_pool_sample
    if now - _last_pool_sample < POOL_SAMPLE_EVERY_S:
        return
    _last_pool_sample = now
    from django.db import connection

    pool = getattr(type(connection), "_connection_pools", {}).get(connection.alias)
    if pool is None:
        return
    stats = pool.get_stats()
    size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
    metrics.record_pool(in_use=size - available, idle=available, max_size=stats.get("pool_max", 0),
                        waiting=stats.get("requests_waiting", 0))


class ObserveRequestsMiddleware:
    """See the module docstring. Sync and async: Django runs it in the same mode as the view."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.metrics = metrics.enabled()
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        request_id = _incoming_id(request)
        token = request_ids.bind(request_id)
        started = time.perf_counter()
        response = None
        try:
            response = self.get_response(request)
            return response
        finally:
            self._after(request, response, request_id, token, started)

    async def __acall__(self, request):
        request_id = _incoming_id(request)
        token = request_ids.bind(request_id)
        started = time.perf_counter()
        response = None
        try:
            response = await self.get_response(request)
            return response
        finally:
            self._after(request, response, request_id, token, started)

    def _after(self, request, response, request_id, token, started) -> None:
        seconds = time.perf_counter() - started
        status = response.status_code if response is not None else 500
        route = route_of(request)
        method = request.method if request.method in _METHODS else "other"
        if response is not None:
            response["X-Request-ID"] = request_id
        if self.metrics:
            metrics.record_request(route=route, method=method, status=status, seconds=seconds)
            _sample_pool(time.monotonic())
        request_ids.event("request", request_id=request_id, user_id=user_id_of(request), route=route, method=method,
                          status=status, duration_ms=round(seconds * 1000, 2))
        request_ids.unbind(token)  # in the request's own context; a stream binds the id again where it is read
        if response is not None and getattr(response, "streaming", False):
            events_stream = response.get("Content-Type", "").startswith("text/event-stream")
            response.streaming_content = self._stream(response, route, request_id, counted=self.metrics and events_stream)

    def _stream(self, response, route, request_id, *, counted: bool):
        """The response's chunks, the request id bound while they are read, in the context that reads
        them (a server may read a stream in another context than the request's), and the stream counted open."""
        if counted:
            metrics.STREAMS_OPEN.labels(route).inc()
        if response.is_async:
            return self._achunks(response.streaming_content, route, request_id, counted)
        return self._chunks(response.streaming_content, route, request_id, counted)

    @staticmethod
    def _chunks(content, route, request_id, counted):
        token = request_ids.bind(request_id)
        try:
            yield from content
        finally:
            if counted:
                metrics.STREAMS_OPEN.labels(route).dec()
            request_ids.unbind(token)

    @staticmethod
    async def _achunks(content, route, request_id, counted):
        token = request_ids.bind(request_id)
        try:
            async for chunk in content:
                yield chunk
        finally:
            if counted:
                metrics.STREAMS_OPEN.labels(route).dec()
            request_ids.unbind(token)
