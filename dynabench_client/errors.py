"""The errors of the Dynabench client: one class per kind of error answer of the server."""

from __future__ import annotations


class DynabenchError(Exception):
    """An error answer from the server: HTTP ``status``, a stable ``code``, the server's ``detail``.

    ``field`` names the input field at fault when there is one; ``errors`` maps every
    field at fault to its messages.
    """

    def __init__(self, status: int, code: str, detail: str, *, field: str | None = None, errors: dict | None = None):
        super().__init__(f"{status} {code}: {detail}")
        self.status, self.code, self.detail, self.field, self.errors = status, code, detail, field, errors or {}


class BadRequest(DynabenchError):
    """400 (and 413/415): the input was refused; ``detail`` says what to fix."""


class AuthenticationError(DynabenchError):
    """401: missing, wrong or revoked API token."""


class PermissionDenied(DynabenchError):
    """403: the token's user may not do this."""


class NotFound(DynabenchError):
    """404: no such task, round, model or dataset (or not visible to this user)."""


class RateLimited(DynabenchError):
    """429: a rate limit or daily cap was reached; ``retry_after`` is in seconds when the server said."""

    def __init__(self, *args, retry_after: float | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(DynabenchError):
    """5xx: the server failed; the request may be retried later."""


ERRORS = {400: BadRequest, 401: AuthenticationError, 403: PermissionDenied, 404: NotFound, 413: BadRequest, 415: BadRequest, 429: RateLimited}
"""HTTP status -> the error class it raises (5xx: ``ServerError``; any other: ``DynabenchError``)."""
