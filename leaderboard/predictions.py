"""Predictions files: reading and checking a researcher's JSONL predictions against a task's datasets.

A predictions file has one line per item: ``{"uid": ..., <field>: ...}``, where the field is
the task kind's ``prediction_field`` (``label`` for classification, ``answer`` for extractive
QA), optionally with ``"dataset": name``. ``parse_predictions`` checks an upload (every problem
listed with line numbers); ``read_predictions_file`` reads back the normalised file stored for
a predictions model (``leaderboard.services.submit_predictions`` writes it).
"""

from __future__ import annotations

import json
from collections import defaultdict

from django.db import connections

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONRefused, line_loader, text_needs_checks
from leaderboard.error_codes import LeaderboardErrorCode as Code
from tasks.loop import artefacts
from tasks.models import Dataset, DatasetItem, MLModel, Task

MAX_LISTED = 10


def scoring_items(task: Task) -> dict[str, dict[str, int]]:
    """Return ``{dataset name: {item uid: item id}}`` for the task's scoring datasets."""
    names = dict(Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).values_list("pk", "name"))
    out: dict[str, dict[str, int]] = {name: {} for name in names.values()}
    if not names:
        return out
    if len(names) == 1:
        (pk, name), = names.items()
        rows = DatasetItem.objects.filter(dataset_id=pk).values_list("uid", "pk")
        out[name] = dict(_rows(rows))
        return out
    rows = DatasetItem.objects.filter(dataset_id__in=list(names)).values_list("dataset_id", "uid", "pk")
    for dataset_id, uid, pk in _rows(rows):
        out[names[dataset_id]][uid] = pk
    return out


def _rows(queryset, chunk: int = 20000):
    """The rows of a ``values_list`` queryset straight from the database cursor, in chunks: the ORM's
    per-row iterator costs more than the query for a scoring set of 100,000 items."""
    compiler = queryset.query.get_compiler(queryset.db)
    sql, params = compiler.as_sql()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(chunk):
            yield from batch


def require_scoring_items(task: Task) -> dict[str, dict[str, int]]:
    """Return ``scoring_items(task)``, or raise ``RuleError`` ``no_scoring_datasets`` when the task has
    none (a predictions file cannot be scored then). Submissions and their dry run share it."""
    datasets = scoring_items(task)
    if not datasets:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' has no scoring datasets yet, so predictions cannot be scored.")
    return datasets


def _listing(pairs: list, what: str) -> str:
    """``what: first; second; … (and N more; M in all)``: the first offenders, then how many there are
    (a heading that counts them itself, ``no prediction for N of M items``, gets no total)."""
    shown = "; ".join(pairs[:MAX_LISTED])
    more = f"and {len(pairs) - MAX_LISTED:,} more; " if len(pairs) > MAX_LISTED else ""
    total = "" if what.startswith("no prediction") else f" ({more}{len(pairs):,} in all)"
    if not total and more:
        total = f" ({more.removesuffix('; ')})"
    return f"{what}: {shown}{total}"


_BLOCK_BYTES = 8 * 2**20
"""A predictions file is read in blocks of about this many bytes, each decoded and split at once."""


def _uid_owners(datasets: dict[str, dict[str, int]]) -> dict[str, str | list[str]]:
    """``{uid: its dataset's name}``, or the list of names for a uid in several datasets."""
    if len(datasets) == 1:
        (name, items), = datasets.items()
        return dict.fromkeys(items, name)
    owners: dict[str, str | list[str]] = {}
    for name, items in datasets.items():
        for uid in items:
            seen = owners.get(uid)
            owners[uid] = name if seen is None else [*(seen if isinstance(seen, list) else [seen]), name]
    return owners


def _numbered_lines(lines):
    """Yield ``(line number, text or None when the line is not UTF-8, load)`` for the lines of a file
    object (read in blocks of ``_BLOCK_BYTES`` split at newlines, each block decoded at once) or of
    an iterable of ``bytes``/``str`` lines; ``load`` parses one line as ``loads_bounded`` would
    (``dynabench.jsonbounds.line_loader``), skipping the text scan for a block that needs none."""
    checked, unchecked = line_loader(text_checked=True), line_loader()
    read = getattr(lines, "read", None)
    if read is None:
        for number, raw in enumerate(lines, start=1):
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raw = None
            yield number, raw, unchecked
        return
    number, rest = 0, b""
    while True:
        chunk = read(_BLOCK_BYTES)
        block = rest + (chunk if isinstance(chunk, bytes) else chunk.encode("utf-8", "surrogatepass"))
        if chunk:
            cut = block.rfind(b"\n") + 1
            block, rest = block[:cut], block[cut:]
        if block:
            try:
                text = block.decode("utf-8")
            except UnicodeDecodeError:
                for raw in block.split(b"\n")[: block.count(b"\n") + (not block.endswith(b"\n"))]:
                    number += 1
                    try:
                        yield number, raw.decode("utf-8"), unchecked
                    except UnicodeDecodeError:
                        yield number, None, unchecked
            else:
                load = unchecked if text_needs_checks(text) else checked
                parts = text.split("\n")
                if text.endswith("\n"):
                    parts.pop()
                for raw in parts:
                    number += 1
                    yield number, raw, load
        if not chunk:
            return


def parse_predictions(task: Task, lines, *, datasets: dict[str, dict[str, int]], require_all: bool = True) -> dict:
    """Return ``{(dataset, uid): label or answer}`` from JSONL ``lines`` (bytes or str).

    Each line: ``{"uid": ..., "label": ...}`` (classification; labels or their aliases),
    ``{"uid": ..., "answer": "..."}`` (extractive QA) or ``{"uid": ..., "translation": "..."}``
    (generation), optionally ``"dataset": name`` (needed when a uid occurs in two scoring
    datasets) and the item fields the kind checks (``checked_item_fields``: a generation
    item's language pair), which must then be the item's. Collects every problem, then raises
    one ``RuleError`` that lists them with line numbers (the first offender first, then how many
    there are in all; the file is refused whole, whatever the datasets' label visibility): invalid
    JSON or encoding, missing fields, invalid values (a non-string translation), a wrong
    language pair, duplicates, unknown or ambiguous uids, and (``require_all``) the items of
    scoring datasets that have no prediction.
    """
    spec = task.spec
    field = spec.prediction_field
    config = task.config
    parse_prediction = spec.parse_prediction
    checked_names = spec.checked_item_fields(config)
    checked = None
    where = _uid_owners(datasets)
    problems: dict[str, list[str]] = defaultdict(list)
    predictions: dict[tuple[str, str], str] = {}
    seen_line: dict[tuple[str, str], int] = {}
    for number, raw, load in _numbered_lines(lines):
        if raw is None:
            problems["not UTF-8 text"].append(f"line {number}")
            continue
        line = raw.strip()
        if not line:
            continue
        try:
            record = load(line)
        except json.JSONDecodeError as error:
            problems["not valid JSON"].append(f"line {number} ({error.msg})")
            continue
        except JSONRefused as error:  # too deep, a number past 64 bits, NUL: the bounded reader says which
            problems["refused JSON"].append(f"line {number} ({error})")
            continue
        if not isinstance(record, dict) or "uid" not in record or record.get(field) is None:
            problems[f"not an object with \"uid\" and \"{field}\""].append(f"line {number}")
            continue
        uid = str(record["uid"])
        value, problem = parse_prediction(config, record[field])
        if problem is not None:
            heading, detail = problem
            problems[heading].append(f"line {number}" + (f": {detail}" if detail else ""))
            continue
        dataset = record.get("dataset")
        if dataset is not None:
            dataset = str(dataset)
            if dataset not in datasets:
                problems[f"unknown dataset (scoring datasets: {', '.join(sorted(datasets))})"].append(f"line {number}: {dataset!r}")
                continue
            if uid not in datasets[dataset]:
                problems["unknown uid"].append(f"line {number}: {uid} (not in {dataset})")
                continue
        else:
            dataset = where.get(uid)
            if dataset is None:
                problems["unknown uid"].append(f"line {number}: {uid}")
                continue
            if isinstance(dataset, list):
                problems["uid in several datasets (add \"dataset\")"].append(f"line {number}: {uid} ({', '.join(dataset)})")
                continue
        key = (dataset, uid)
        if checked_names:
            if checked is None:
                checked = item_fields(task, checked_names)
            mismatched = [
                name for name in checked_names
                if record.get(name) is not None and str(record[name]) != str(checked.get(key, {}).get(name))
            ]
            if mismatched:
                name = mismatched[0]
                problems[f"wrong {name}"].append(
                    f"line {number}: {uid} has {name} {record[name]!r}, the item's is {checked.get(key, {}).get(name)!r}"
                )
                continue
        if key in predictions:
            problems["duplicate uid"].append(f"line {number}: {uid} (first on line {seen_line[key]})")
            continue
        predictions[key] = value
        seen_line[key] = number
    if require_all:
        for dataset, items in sorted(datasets.items()):
            found = {uid for name, uid in predictions if name == dataset} if len(datasets) > 1 else {uid for _, uid in predictions}
            missing = [uid for uid in items if uid not in found]
            if missing:
                problems[f"no prediction for {len(missing):,} of {len(items):,} items of {dataset}"].extend(missing)
    if problems:
        detail = "\n".join(_listing(entries, what) for what, entries in problems.items())
        code = Code.INCOMPLETE_PREDICTIONS if all(w.startswith("no prediction") for w in problems) else Code.BAD_PREDICTIONS
        raise RuleError(code, "The predictions file cannot be scored. Fix these and upload it again:\n" + detail, field="upload")
    return predictions


def read_predictions_file(model: MLModel) -> dict[tuple[str, str], str]:
    """Return ``{(dataset name, uid): label, answer or translation}`` (the task kind's ``prediction_field``)
    from a stored predictions model (read from the storage through this worker's artefact cache when
    published there, ``tasks/loop/artefacts.py``)."""
    field = model.task.spec.prediction_field
    out = {}
    with open(artefacts.local_path(model), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                out[(record["dataset"], record["uid"])] = record.get(field)
    return out


def item_fields(task: Task, names: list[str]) -> dict[tuple[str, str], dict]:
    """Return ``{(dataset name, uid): {name: value}}`` of the input fields ``names`` of the task's scoring items."""
    rows = DatasetItem.objects.filter(dataset__task=task, dataset__access=Dataset.Access.SCORING)
    return {
        (dataset, uid): {name: (data or {}).get(name) for name in names}
        for dataset, uid, data in rows.values_list("dataset__name", "uid", "input").iterator(chunk_size=5000)
    }
