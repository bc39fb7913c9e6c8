"""Reading server-rendered pages in tests."""

import re

CSRF_TOKEN = re.compile(r"\b[A-Za-z0-9]{64}\b")
"""A masked CSRF token as Django renders it into forms and ``hx-headers``: 64 random letters and digits."""


def without_csrf_tokens(html: str) -> str:
    """``html`` with each CSRF token replaced by ``<csrf token>``, for a test that checks a word is
    absent from a page: a token is random, and one once held "...zngoldgq1..." on a page that
    must not say "gold"; a three-letter name turns up in about one page in 1,500."""
    return CSRF_TOKEN.sub("<csrf token>", html)
