"""JSON from untrusted senders, parsed with bounds: nesting depth, integer size, text PostgreSQL takes.

Python's ``json`` recurses once per level: a body of a few thousand ``[`` raises
``RecursionError`` (a 500 where it is not caught), and deep but parseable documents make
every later walk over them slow. An integer of 5,000 digits raises a bare ``ValueError`` from
Python's int-string limit (4,300 digits since 3.11), and one of 30 digits parses but cannot be
stored in a 64-bit column, or compared with one on SQLite. PostgreSQL refuses NUL (``\\u0000``) in
``text`` and ``jsonb``, and a lone surrogate (``\\ud800``) cannot be encoded as UTF-8 at all.
``loads_bounded`` turns each into a ``JSONRefused`` (a ``ValueError``) whose message names the
problem, so callers answer 400 (or a line-numbered import error) instead of a 500.

``refused_character`` is the same text check for text that did not come as JSON (CSV cells,
form fields, file lines).
"""

import json
import math
import re

# Deeper than any document this platform takes (task configs, model config.json, API bodies).
MAX_JSON_DEPTH = 64
# Integers of at most this many digits (a 64-bit integer has at most 19): ids, offsets, counts.
MAX_INT_DIGITS = 19
# Integers must also fit a signed 64-bit column (PostgreSQL bigint, SQLite INTEGER).
MAX_INT = 2**63 - 1


class JSONRefused(ValueError):
    """The document is valid JSON but outside the platform's bounds; ``str()`` says which and where."""


class JSONTooDeep(JSONRefused):
    """The document nests arrays/objects deeper than allowed."""

    def __init__(self, limit: int):
        super().__init__(f"the JSON nests arrays or objects more than {limit} levels deep")
        self.limit = limit


class JSONNumberTooLarge(JSONRefused):
    """An integer with more digits than allowed, or outside a signed 64-bit integer; or a number
    that overflows to infinity, or NaN/Infinity (not JSON)."""

    path: list = []
    """Keys and indexes leading to the number (filled by ``loads_bounded`` for an integer), and ``field``
    its innermost key, so an API answer can name the field."""

    @property
    def field(self) -> str | None:
        return next((str(p) for p in reversed(self.path) if isinstance(p, str)), None)

    def __init__(self, text: str, *, digits: int | None = None):
        shown = text if len(text) <= 24 else f"{text[:12]}…{text[-6:]} ({len(text.lstrip('-'))} digits)"
        reason = (f"more than {digits} digits" if digits is not None else "outside a signed 64-bit integer")
        reason += f"; the largest integer taken is {MAX_INT:,}"
        if text in ("NaN", "Infinity", "-Infinity") or not text.lstrip("-").isdigit():
            reason = "not a finite number"
        super().__init__(f"the number {shown} is {reason}")
        self.text = text


class JSONBadCharacter(JSONRefused):
    """A string (or key) holds a character the database refuses: NUL, or a lone UTF-16 surrogate.
    ``path`` is the list of keys/indexes leading to it; ``field`` its innermost key (or None)."""

    def __init__(self, message: str, path: list):
        where = ".".join(str(p) for p in path)
        super().__init__(f"{message}{f' in {where}' if where else ''}")
        self.path = path
        self.is_nul = "NUL" in message

    @property
    def field(self) -> str | None:
        return next((str(p) for p in reversed(self.path) if isinstance(p, str)), None)


def refused_character(text: str) -> str | None:
    """Describe the first character of ``text`` that PostgreSQL refuses in ``text``/``jsonb`` (NUL) or
    that UTF-8 cannot encode (a lone surrogate), with its 1-based column; None when there is none."""
    position = text.find("\x00")
    if position >= 0:
        return f"a NUL character (\\u0000) at column {position + 1}"
    if text.isascii():
        return None
    for position, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            return f"a lone surrogate (\\u{ord(char):04x}) at column {position + 1}, which is not text"
    return None


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


_SURROGATE = re.compile("[\ud800-\udfff]")


def _needs_walk(text, *, max_depth: int, check_text: bool) -> bool:
    """Whether the parsed document must be walked: it may nest deeper than ``max_depth`` (its
    text holds more ``[`` and ``{`` than that; strings only add to the count), or, with
    ``check_text``, a string may hold NUL or a lone surrogate (only a ``\\u`` escape, a raw
    surrogate in ``str`` input, or UTF-8 bytes starting ``0xED`` can put one there). Most
    documents need no walk: the scan is in C."""
    if isinstance(text, (bytes, bytearray)):
        if text.count(b"[") + text.count(b"{") > max_depth:
            return True
        return check_text and (b"\\u" in text or b"\xed" in text)
    if isinstance(text, str):
        if text.count("[") + text.count("{") > max_depth:
            return True
        return check_text and ("\\u" in text or "\x00" in text or _SURROGATE.search(text) is not None)
    return True


def check_json(value, *, max_depth: int = MAX_JSON_DEPTH, check_text: bool = True) -> None:
    """Walk ``value`` once (no recursion): raise ``JSONTooDeep`` past ``max_depth`` and, with
    ``check_text``, ``JSONBadCharacter`` for the first key or string holding NUL or a lone surrogate."""
    stack = [(value, 0, [])]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if check_text and (problem := refused_character(item)):
                raise JSONBadCharacter(problem, path)
            continue
        if isinstance(item, dict):
            if depth + 1 > max_depth:
                raise JSONTooDeep(max_depth)
            for key, child in item.items():
                if check_text and (problem := refused_character(key)):
                    raise JSONBadCharacter(f"{problem} (in a key)", path)
                stack.append((child, depth + 1, [*path, key]))
        elif isinstance(item, list):
            if depth + 1 > max_depth:
                raise JSONTooDeep(max_depth)
            stack.extend((child, depth + 1, [*path, index]) for index, child in enumerate(item))


def _parse_int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise JSONNumberTooLarge(text, digits=MAX_INT_DIGITS)
    number = int(text)
    if not -MAX_INT - 1 <= number <= MAX_INT:
        raise JSONNumberTooLarge(text)
    return number


class _BigInteger(str):
    """An integer's digits kept as text by ``_path_of_big_integer`` (never converted)."""


def _lenient_int(text: str):
    try:
        return _parse_int(text)
    except JSONNumberTooLarge:
        return _BigInteger(text)


def _path_of_big_integer(text, kwargs) -> list:
    """Where the first integer out of bounds sits in ``text``: parsed again keeping such integers as text."""
    try:
        data = json.loads(text, **{**kwargs, "parse_int": _lenient_int})
    except (ValueError, RecursionError):
        return []
    stack = [(data, [])]
    while stack:
        item, path = stack.pop(0)
        if isinstance(item, _BigInteger):
            return path
        if isinstance(item, dict):
            stack.extend((child, [*path, key]) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in enumerate(item))
    return []


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise JSONNumberTooLarge(text)
    return number


def _refuse_constant(text: str):
    raise JSONNumberTooLarge(text)


def loads_bounded(text, *, max_depth: int = MAX_JSON_DEPTH, check_text: bool = True, **kwargs):
    """``json.loads(text, **kwargs)`` within the platform's bounds.

    Refuses documents nested deeper than ``max_depth`` (``JSONTooDeep``), integers of more than
    ``MAX_INT_DIGITS`` digits or outside a signed 64-bit integer, numbers that overflow to
    infinity and ``NaN``/``Infinity`` (``JSONNumberTooLarge``; the digits are counted before
    Python's int-string limit is met), and, with ``check_text`` (default), NUL or lone surrogates
    in any key or string (``JSONBadCharacter``, naming its path). A caller's ``parse_int``,
    ``parse_float`` or ``parse_constant`` replaces the bounded one. Raises ``JSONRefused``
    (each of the above) or ``json.JSONDecodeError`` (not JSON); all are ``ValueError``.
    """
    kwargs.setdefault("parse_int", _parse_int)
    kwargs["parse_float"] = kwargs.get("parse_float") or _parse_float
    kwargs["parse_constant"] = kwargs.get("parse_constant") or _refuse_constant
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    except JSONNumberTooLarge as error:
        if kwargs["parse_int"] is _parse_int:
            error.path = _path_of_big_integer(text, kwargs)
        raise
    except JSONRefused:
        raise
    except ValueError as error:
        if "integer string conversion" in str(error):  # Python's own limit, met by a caller's parse_int
            raise JSONRefused(f"an integer has more digits than Python converts ({error})") from None
        raise
    if _needs_walk(text, max_depth=max_depth, check_text=check_text):
        check_json(data, max_depth=max_depth, check_text=check_text)
    return data


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant)


def line_loader(*, text_checked: bool = False, max_depth: int = MAX_JSON_DEPTH):
    """Return ``load(line)``, equal to ``loads_bounded(line, max_depth=max_depth)`` for a ``str`` line
    (the same value, the same error with the same message), for files of many short JSON lines.

    ``loads_bounded`` builds a decoder per call (``json.loads`` does, given ``parse_int``); this one
    is built once. With ``text_checked`` the caller vouches that the text holds no ``\\u`` escape, no
    NUL and no lone surrogate (``text_needs_checks`` said so for the whole file, e.g. strict UTF-8
    bytes decoded), so only the depth is counted per line. Any failure is parsed again by
    ``loads_bounded`` so that the error is exactly its own.
    """
    decode = _DECODER.decode

    def load(line: str):
        try:
            data = decode(line)
        except (ValueError, RecursionError):
            return loads_bounded(line, max_depth=max_depth)
        if line.count("[") + line.count("{") > max_depth or (
            not text_checked and ("\\u" in line or "\x00" in line or _SURROGATE.search(line) is not None)
        ):
            check_json(data, max_depth=max_depth)
        return data

    return load


def text_needs_checks(text: str) -> bool:
    """Whether a text decoded from strict UTF-8 may hold NUL or a lone surrogate once parsed as JSON
    (a ``\\u`` escape or a raw NUL in it); False lets ``line_loader(text_checked=True)`` skip the scan."""
    return "\\u" in text or "\x00" in text
