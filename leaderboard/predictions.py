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

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONRefused, loads_bounded
from leaderboard.error_codes import LeaderboardErrorCode as Code
from tasks import artefacts
from tasks.models import Dataset, DatasetItem, MLModel, Task

MAX_LISTED = 10


def scoring_items(task: Task) -> dict[str, dict[str, int]]:
    """Return ``{dataset name: {item uid: item id}}`` for the task's scoring datasets."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for dataset in Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).values_list("name", flat=True):
        out[dataset] = {}
    rows = DatasetItem.objects.filter(dataset__task=task, dataset__access=Dataset.Access.SCORING)
    for dataset, uid, pk in rows.values_list("dataset__name", "uid", "pk").iterator(chunk_size=5000):
        out[dataset][uid] = pk
    return dict(out)


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
    where: dict[str, list[str]] = defaultdict(list)
    for dataset, items in datasets.items():
        for uid in items:
            where[uid].append(dataset)
    problems: dict[str, list[str]] = defaultdict(list)
    predictions: dict[tuple[str, str], str] = {}
    seen_line: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems["not UTF-8 text"].append(f"line {number}")
                continue
        line = raw.strip()
        if not line:
            continue
        try:
            record = loads_bounded(line)
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
            candidates = where.get(uid, [])
            if not candidates:
                problems["unknown uid"].append(f"line {number}: {uid}")
                continue
            if len(candidates) > 1:
                problems["uid in several datasets (add \"dataset\")"].append(f"line {number}: {uid} ({', '.join(candidates)})")
                continue
            dataset = candidates[0]
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
            missing = [uid for uid in items if (dataset, uid) not in predictions]
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
    published there, ``tasks/artefacts.py``)."""
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
