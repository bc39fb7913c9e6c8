"""``line_loader`` (one decoder for a predictions file's many lines) answers every line exactly as
``loads_bounded`` does: the same value, or the same error class and message, with and without the
whole-text check; and a predictions file read in blocks reports a non-UTF-8 line by its number."""

import io

import pytest

from dynabench.jsonbounds import line_loader, loads_bounded, text_needs_checks
from leaderboard.predictions import _numbered_lines

LINES = [
    '{"uid": "a", "label": "neutral"}',
    '{"uid": "a", "label": ' + "[" * 70 + "]" * 70 + "}",
    '{"uid": "a\\u0000", "label": "x"}',
    '{"uid": "\\ud800", "label": "x"}',
    '{"uid": 123456789012345678901234, "label": "x"}',
    '{"uid": 1e999, "label": "x"}',
    '{"uid": NaN}',
    '{"uid": "a", "label": ',
    '\ufeff{"uid": "a"}',
    '[1, 2, {"deep": [[[]]]}]',
    '"just text"',
]


def _outcome(load, line):
    try:
        return ("value", load(line))
    except ValueError as error:
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("line", LINES)
def test_same_answer_as_loads_bounded(line):
    expected = _outcome(loads_bounded, line)

    assert _outcome(line_loader(), line) == expected
    if not text_needs_checks(line):
        assert _outcome(line_loader(text_checked=True), line) == expected


def test_blocks_keep_line_numbers_and_find_the_bad_bytes(monkeypatch):
    monkeypatch.setattr("leaderboard.predictions._BLOCK_BYTES", 16)
    data = b'{"uid": "a"}\n\n{"uid": "\xff"}\r\n{"uid": "b"}'

    got = [(number, text) for number, text, _ in _numbered_lines(io.BytesIO(data))]

    assert got == [(1, '{"uid": "a"}'), (2, ""), (3, None), (4, '{"uid": "b"}')]
    assert [(n, t) for n, t, _ in _numbered_lines(data.split(b"\n"))] == got[:2] + [(3, None), (4, '{"uid": "b"}')]
