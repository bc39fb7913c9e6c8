"""Request ids: one id per request, in every log line the request causes, in its ``X-Request-ID``
response header, and in the RQ jobs it queues.

The id lives in a context variable: the middleware (``dynabench/request_observer.py``) binds it for
the request, a sync view's database steps and an async view's coroutines see it, RQ jobs carry it
in ``job.meta["request_id"]`` (``dynabench/job_observer.py``), and ``RequestIdFilter`` puts it on
every log record (``-`` outside a request or a job). ``event`` writes the one JSON line per
request and per job to the ``dynabench.events`` logger.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("dynabench_request_id", default=None)

#: An id a trusted proxy sent may be kept: letters, digits and ``._:-``, 8 to 128 of them.
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:-]{8,128}")

events = logging.getLogger("dynabench.events")


def new_id() -> str:
    """A fresh request id (32 hex digits)."""
    return uuid.uuid4().hex


def well_formed(value: str | None) -> bool:
    """Whether ``value`` may be used as a request id as it is (sent by a proxy, or carried by a job)."""
    return bool(value) and _WELL_FORMED.fullmatch(value) is not None


def current() -> str | None:
    """The request id of the request or job running in this context, or None."""
    return _current.get()


def bind(request_id: str | None) -> contextvars.Token:
    """Make ``request_id`` the current one; give the returned token to ``unbind`` when it ends."""
    return _current.set(request_id)


def unbind(token: contextvars.Token) -> None:
    """Restore the request id that was current before ``bind`` returned ``token``."""
    try:
        _current.reset(token)
    except ValueError:  # reset from another context (a stream ended elsewhere): forget it instead
        _current.set(None)


class RequestIdFilter(logging.Filter):
    """Put the current request id on each record as ``record.request_id`` (``-`` when there is none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current.get() or "-"
        return True


def event(kind: str, **fields) -> None:
    """Log one JSON line ``{"event": kind, "request_id": ..., **fields}`` to ``dynabench.events`` at INFO."""
    if events.isEnabledFor(logging.INFO):
        fields.setdefault("request_id", _current.get())
        events.info(json.dumps({"event": kind, **fields}, separators=(",", ":"), default=str))
