"""A task definition file (a proposal's, or one uploaded on the console's New task page), checked
as ``manage.py create_task`` checks one, with each problem on the line of the file where it is.

The file has the shape ``tasks.data.seed.create_task`` takes (``code``, ``name``, ``kind``,
``instructions``, ``config``, optionally ``content_warning``, ``collecting``, ``contexts``). It is
parsed with ``dynabench.jsonbounds.loads_bounded`` (depth, integer size, NUL, lone surrogates) and
its config checked with ``tasks.kinds.config.validate_task_config`` (the kind's JSON Schema and rules),
whose messages name the config path at fault (``config.input_fields.0.name: ...``);
``line_of`` finds that path's line in the text, so every problem reads ``line 12: config.labels:
...``. Pure: no ORM.
"""

from __future__ import annotations

import bisect
import json
import re

from dynabench.jsonbounds import JSONRefused, loads_bounded
from tasks.kinds.config import validate_task_config

REQUIRED_KEYS = ("code", "name", "kind", "instructions", "config")
OPTIONAL_KEYS = ("content_warning", "collecting", "contexts")
MAX_DEFINITION_BYTES = 256 * 1024
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_UNEXPECTED = re.compile(r"\('([^']+)' was unexpected\)")
_CODE = re.compile(r"[-a-zA-Z0-9_]+")


class DefinitionProblems(ValueError):
    """The definition cannot be used: ``problems`` are line-numbered messages (``line 3: ...``)."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def value_lines(text: str) -> dict[tuple, int]:
    """Map the path of every value of the JSON document ``text`` (a tuple of keys and indexes, ``()``
    for the whole document) to the 1-based line where it starts (for an object's member, the line of
    its key). ``text`` must be valid JSON."""
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    line = lambda index: bisect.bisect_right(newlines, index - 1) + 1
    lines: dict[tuple, int] = {}

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _WS:
            i += 1
        return i

    def walk(i: int, path: tuple, at: int) -> int:
        i = skip(i)
        lines[path] = line(at if at >= 0 else i)
        if text[i] == "{":
            i = skip(i + 1)
            if text[i] == "}":
                return i + 1
            while True:
                key_at = i
                key, i = json.decoder.scanstring(text, i + 1)
                i = skip(i) + 1  # the colon
                i = skip(walk(i, path + (key,), key_at))
                if text[i] == "}":
                    return i + 1
                i = skip(i + 1)  # the comma
        if text[i] == "[":
            i = skip(i + 1)
            if text[i] == "]":
                return i + 1
            index = 0
            while True:
                i = skip(walk(i, path + (index,), -1))
                index += 1
                if text[i] == "]":
                    return i + 1
                i += 1
        _, end = _DECODER.raw_decode(text, i)
        return end

    walk(0, (), -1)
    return lines


def line_of(lines: dict[tuple, int], path: list) -> int:
    """The line of ``path`` in a document mapped by ``value_lines``; a path that does not exist as
    such (a field named where the file has an index) takes the line of its deepest existing parent."""
    path = tuple(path)
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path, 1)


def _message_path(message: str) -> list:
    """The path a ``validate_task_config`` message names (``config.input_fields.0.name: ...`` →
    ``["config", "input_fields", 0, "name"]``), with the unexpected key of an
    ``additionalProperties`` message appended."""
    head = message.split(": ", 1)[0]
    parts: list = []
    for part in head.split("."):
        if part == "(top level)":
            continue
        parts.append(int(part) if part.isdigit() else part)
    unexpected = _UNEXPECTED.search(message)
    if unexpected:
        parts.append(unexpected.group(1))
    return parts


def parse_definition(text: str) -> dict:
    """Parse a definition file's text; raise ``DefinitionProblems`` (line-numbered) when it is not a
    bounded JSON object with the keys ``create_task`` needs."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DEFINITION_BYTES:
        raise DefinitionProblems([f"line 1: the file is larger than {MAX_DEFINITION_BYTES:,} bytes"])
    try:
        definition = loads_bounded(text)
    except json.JSONDecodeError as error:
        raise DefinitionProblems([f"line {error.lineno}: not valid JSON: {error.msg}"]) from None
    except JSONRefused as error:
        raise DefinitionProblems([f"line 1: {error}"]) from None
    if not isinstance(definition, dict):
        raise DefinitionProblems(["line 1: the file must hold one JSON object"])
    lines = value_lines(text)
    problems = [f"line 1: the definition lacks '{key}'" for key in ("config",) if key not in definition]
    unknown = sorted(set(definition) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    problems += [f"line {line_of(lines, [key])}: '{key}' is not a definition key" for key in unknown]
    if problems:
        raise DefinitionProblems(problems)
    return definition


def check_definition(definition: dict, text: str, *, form_keys: dict[str, str]) -> list[str]:
    """Check a complete definition (the file's, with the form's values set in it) against its kind's
    schema; return line-numbered problems (empty: it can become a task).

    ``form_keys`` maps a config key the form set (``labels``, ``license``) to the form field's name,
    so a problem with it names the form field instead of a line.
    """
    lines = value_lines(text) if text else {}
    problems = []
    for message in validate_task_config(definition.get("config"), kind=str(definition.get("kind", ""))):
        path = _message_path(message)
        if len(path) >= 2 and path[0] == "config" and path[1] in form_keys:
            problems.append(f"{form_keys[path[1]]}: {message}")
        elif path and path[0] == "kind":
            problems.append(f"kind: {message.split(': ', 1)[-1]}")
        else:
            problems.append(f"line {line_of(lines, path)}: {message}")
    contexts = definition.get("contexts", [])
    if not isinstance(contexts, list) or not all(isinstance(c, dict) and isinstance(c.get("uid"), str) and isinstance(c.get("data"), dict) for c in contexts):
        problems.append(f"line {line_of(lines, ['contexts'])}: contexts: a list of {{\"uid\": text, \"data\": {{...}}, \"tag\"?}}")
    if "collecting" in definition and not isinstance(definition["collecting"], bool):
        problems.append(f"line {line_of(lines, ['collecting'])}: collecting: true or false")
    if not isinstance(definition.get("content_warning", ""), str):
        problems.append(f"line {line_of(lines, ['content_warning'])}: content_warning: text")
    return problems


def check_definition_file(text: str) -> dict:
    """Parse and check a whole definition file (every key ``create_task`` needs in the file itself,
    as the console's New task page and ``manage.py create_task`` take it); return the definition.

    Raises ``DefinitionProblems`` with every problem on its line (``line 7: config.labels: ...``):
    not bounded JSON, a missing or unknown key, a ``code`` that cannot be in a URL, a config its
    kind's schema refuses. Pure: whether the code is taken is the caller's question.
    """
    definition = parse_definition(text)
    lines = value_lines(text)
    problems = [f"line 1: the definition lacks '{key}'" for key in REQUIRED_KEYS if key not in definition]
    code = definition.get("code")
    if "code" in definition and not (isinstance(code, str) and _CODE.fullmatch(code)):
        problems.append(f"line {line_of(lines, ['code'])}: code: letters, digits, '-' or '_' (it is in the task's URLs)")
    if not problems:
        problems = check_definition(definition, text, form_keys={})
    if problems:
        raise DefinitionProblems(problems)
    return definition
