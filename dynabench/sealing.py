"""Sealed tokens: what the server hands a page and reads back, encrypted and authenticated (Fernet:
AES-128-CBC with an HMAC-SHA256, a key derived from ``SECRET_KEY`` per purpose), so the client can
neither read nor change it. Used where a signed token would tell the client something it must not
know yet (the models of a side-by-side comparison)."""

from __future__ import annotations

import base64
import hashlib

from django.conf import settings


def _fernet(purpose: str):
    from cryptography.fernet import Fernet

    digest = hashlib.sha256(f"dynabench-sealed:{purpose}:".encode() + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(text: str, *, purpose: str) -> str:
    """``text`` encrypted and authenticated for ``purpose``: an ASCII token (URL-safe base64)."""
    return _fernet(purpose).encrypt(text.encode()).decode("ascii")


def unseal(token: str, *, purpose: str) -> str:
    """The text of a token ``seal`` made for ``purpose``; ``ValueError`` when it was made for another
    purpose or key, changed, or is no token at all."""
    from cryptography.fernet import InvalidToken

    try:
        raw = (token or "").encode("ascii")
        if base64.urlsafe_b64encode(base64.urlsafe_b64decode(raw)) != raw:  # base64 would ignore a character added
            raise ValueError("not canonical base64")
        return _fernet(purpose).decrypt(raw).decode()
    except (InvalidToken, UnicodeError, ValueError) as error:
        raise ValueError("not a sealed token of this server") from error
