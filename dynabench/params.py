"""Whole numbers from query strings and forms, range-checked before they reach a query.

``"²".isdigit()`` is true and ``int("²")`` fails; ``int("1" * 5000)`` meets Python's int-string
limit; and an id of 2**100 passes ``int()`` but not SQLite (``OverflowError``: a 500). Every view
that reads an id, a number or a position from the request goes through ``whole_number``.
"""

MAX_ID = 2**63 - 1
"""The largest value a 64-bit integer column holds (PostgreSQL ``bigint``, SQLite ``INTEGER``)."""


def whole_number(raw, *, minimum: int = 0, maximum: int = MAX_ID) -> int | None:
    """Return ``raw`` (text) as an int when it is ASCII digits (an optional leading ``-``) whose value
    lies in ``[minimum, maximum]``; None otherwise (not a number, or out of range). Never parses more
    than 19 digits."""
    text = str(raw).strip()
    digits = text[1:] if text.startswith("-") else text
    if not digits or not digits.isascii() or not digits.isdigit() or len(digits) > 19:
        return None
    value = int(text)
    return value if minimum <= value <= maximum else None
