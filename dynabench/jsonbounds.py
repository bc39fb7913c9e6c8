"""JSON from untrusted senders, parsed with a nesting limit.

Python's ``json`` recurses once per level: a body of a few thousand ``[`` raises
``RecursionError`` (a 500 where it is not caught), and deep but parseable documents make
every later walk over them slow. ``loads_bounded`` turns both into ``JSONTooDeep``
(a ``ValueError``), so callers answer 400 naming the problem.
"""

import json

# Deeper than any document this platform takes (task configs, model config.json, API bodies).
MAX_JSON_DEPTH = 64


class JSONTooDeep(ValueError):
    """The document nests arrays/objects deeper than allowed."""

    def __init__(self, limit: int):
        super().__init__(f"the JSON nests arrays or objects more than {limit} levels deep")
        self.limit = limit


def json_depth(value) -> int:
    """Return how deeply ``value`` nests lists/dicts (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _openers(text) -> int:
    """How many ``[`` and ``{`` the document's text holds: a bound on its depth (strings only add)."""
    if isinstance(text, (bytes, bytearray)):
        return text.count(b"[") + text.count(b"{")
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return 1 << 62  # anything else (json.loads takes str, bytes, bytearray): always walk


def loads_bounded(text, *, max_depth: int = MAX_JSON_DEPTH, **kwargs):
    """``json.loads(text, **kwargs)`` that refuses documents nested deeper than ``max_depth``.

    Raises ``JSONTooDeep`` (too deep, including documents too deep for Python to parse)
    or ``json.JSONDecodeError`` (not JSON); both are ``ValueError``.
    """
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    if _openers(text) <= max_depth:
        return data  # cannot nest deeper than it has "[" and "{": no walk needed (most documents, in C)
    if json_depth(data) > max_depth:
        raise JSONTooDeep(max_depth)
    return data
