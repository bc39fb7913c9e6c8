"""Typed rule errors raised by service functions and shown the same way on every surface.

A service raises ``RuleError(code, message, field=...)``; the DRF exception handler
(``dynabench/api.py``) turns it into a 400 with ``{"code", "detail", "field"}``, and HTMX
views show ``message`` inline.
"""


class RuleError(Exception):
    """A business rule refused an action. ``code`` is a stable string, ``message`` says what to fix."""

    status_code = 400

    def __init__(self, code: str, message: str, *, field: str | None = None, status_code: int | None = None):
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.field = field
        if status_code is not None:
            self.status_code = status_code

    def as_dict(self) -> dict:
        data = {"code": self.code, "detail": self.message}
        if self.field:
            data["field"] = self.field
        return data


class NotAllowed(RuleError):
    """The actor may not do this to this object (HTTP 403)."""

    status_code = 403


class RateLimited(RuleError):
    """A cap or rate limit was reached (HTTP 429)."""

    status_code = 429


class FieldErrors(RuleError):
    """Several fields of one form were refused at once: ``errors`` is ``{field: [message, ...]}``.

    ``message`` (and the API's ``detail``) names the first field at fault; ``as_dict`` adds
    ``errors`` with every field, as DRF's own validation errors do.
    """

    def __init__(self, code: str, errors: dict[str, list[str]], *, status_code: int | None = None):
        field, messages = next(iter(errors.items()))
        super().__init__(code, f"{field}: {messages[0]}", field=field, status_code=status_code)
        self.errors = errors

    def as_dict(self) -> dict:
        return {**super().as_dict(), "errors": self.errors}
