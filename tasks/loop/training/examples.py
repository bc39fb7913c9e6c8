"""The examples a model trains on (``TrainingExample``) and where they come from: the seed train
split, a JSONL or CSV file read with the importers' rules, validated examples, or a data-centric
selection from the task's pool. Decides which rows are usable, skipped or refused."""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dynabench.errors import RuleError
from tasks.data.importers.errors import ImportRowError
from tasks.data.importers.files import FileSpec, Reader
from tasks.data.importers.mapping import MISSING, RowMapper, lookup
from tasks.data.seed_split import seed_data_path, seed_split
from tasks.kinds import OutOfTaskTarget, TargetError
from tasks.loop.training.error_codes import TrainingErrorCode
from tasks.models import Dataset, DatasetItem, Task

logger = logging.getLogger(__name__)


@dataclass
class TrainingExample:
    """One training example: the model inputs, the target and where it came from.

    ``input``: ``{field: text}`` for the task's ``model_inputs``; ``target``: ``{"label": ..}``
    or ``{"answers": [{"text", "answer_start"}]}``; ``source``: ``seed``, ``file`` or
    ``validated``; ``round``: the round number of a validated example.
    """

    uid: str
    input: dict
    target: dict
    source: str
    round: int | None = None


def example_from_row(task: Task, row: dict, *, uid: str, source: str, round_number: int | None = None):
    """Build a ``TrainingExample`` from a flat row keyed by model field names (plus ``label`` or ``answers``).

    Used for validated examples (``Example.input`` + ``Example.target``). Returns
    ``(example, None)`` or ``(None, reason)`` when the row no longer fits the task: a missing or
    empty input field, a label not in the task, an answer that is not at its offset.
    """
    inputs = {}
    for name in task.config["model_inputs"]:
        value = row.get(name)
        if not isinstance(value, str) or not value.strip():
            return None, f"missing {name}"
        inputs[name] = value
    target, reason = task.spec.target_from_row(task.config, row, inputs)
    if target is None:
        return None, reason
    return TrainingExample(uid=str(uid), input=inputs, target=target, source=source, round=round_number), None


# --------------------------------------------------------------------------- the seed split

def seed_rows(task: Task) -> list[dict]:
    """Return the raw rows of ``task``'s seed file (``RuleError(no_seed_data)`` when it has none)."""
    path = seed_data_path(task)
    if not path.is_file():
        raise RuleError(TrainingErrorCode.NO_SEED_DATA, f"Task {task.code} has no seed training data ({path.name}).")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def seed_examples(task: Task, *, split: str = "train") -> list[TrainingExample]:
    """Return the seed examples we wrote for ``task`` in ``split`` (default: only the train split).

    The dev and test splits are the task's seed scoring datasets (``tasks.data.seed.seed_scoring_datasets``):
    no model trained from the seed data ever sees them. Every row must be usable. Raises
    ``RuleError(no_seed_data)`` for a task without a seed file, and ``ValueError`` for a seed row
    that does not fit the task or whose stored ``split`` disagrees with ``seed_split`` (a bug in
    the repository, not user input).
    """
    path = seed_data_path(task)
    rows = seed_rows(task)
    wrong = [row["uid"] for row in rows if row.get("split") != seed_split(row)]
    if wrong:
        raise ValueError(f"{path.name}: rows whose split is not the seed split's: {wrong[:5]}")
    chosen = {row["uid"] for row in rows if row["split"] == split}
    read = file_examples(task, path, uid_field="uid", source="seed")
    if read.skipped:
        raise ValueError(f"{path.name}: unusable seed rows {dict(read.skipped)}")
    return [example for example in read.examples if example.uid in chosen]


@dataclass
class FileExamples:
    """What ``file_examples`` read: the examples, rows read, rows skipped by reason, the file's sha256."""

    examples: list[TrainingExample]
    rows: int = 0
    skipped: Counter = field(default_factory=Counter)
    checksum: str = ""


def file_examples(
    task: Task, path: Path, *, mapping: dict[str, str] | None = None, uid_field: str | None = None, source: str = "file",
) -> FileExamples:
    """Read training examples of ``task`` from a JSONL or CSV file, with the importers' rules.

    The file is read by ``tasks.data.importers`` (streamed, JSONL or CSV by extension, UTF-8) and
    ``mapping`` (``{model field: file field or dotted path}``, e.g. ``{"text": "sentence",
    "label": "gold_label"}``) has the same meaning as ``--map`` of ``import_dataset``; unmapped
    fields are read under their own name. ``uid_field`` names the id field (default: the line
    number). Classification rows whose label is empty or not one of the task's labels (for
    example DynaSent's ``mixed``) are skipped and counted, since a training file may hold
    more classes than the task; any other malformed row stops the read with
    ``ImportRowError`` ("line N: ..."), like an import. Raises ``RuleError`` for a missing file
    or a mapping that names unknown fields.
    """
    spec = FileSpec(
        path=Path(path), mapping=dict(mapping or {}), uid_field=uid_field or "uid", uid_from="field" if uid_field else "line",
    )
    model_inputs = list(task.config["model_inputs"])
    kind = task.spec
    mapper = RowMapper(spec, text_fields=model_inputs, optional_fields=[], extra_fields=[kind.target_field])
    reader = Reader(spec, progress=False)
    result, seen = FileExamples(examples=[]), {}
    for line, record in reader:
        result.rows += 1
        inputs = mapper.fields(line, record)
        uid = mapper.uid(line, record, inputs)
        if uid in seen:
            raise ImportRowError(line, f"uid '{uid}' repeats line {seen[uid]} of this file")
        seen[uid] = line
        source_field = mapper.source(kind.target_field)
        raw = lookup(record, source_field)
        if raw is MISSING:
            raise ImportRowError(line, f"missing field '{source_field}' (for {kind.target_field})")
        try:
            target = kind.import_target(task.config, raw, inputs, source=source_field)
        except OutOfTaskTarget as error:
            result.skipped[error.skip_reason] += 1
            continue
        except TargetError as error:
            raise ImportRowError(line, str(error)) from None
        result.examples.append(TrainingExample(uid=uid, input=inputs, target=target, source=source))
    result.checksum = reader.checksum
    return result


def validated_training_examples(task: Task, rows) -> list[TrainingExample]:
    """Return training examples of ``task`` from validated examples given as plain rows.

    ``rows``: ``{"id", "round", "input", "target"}`` dicts, ``target`` being the example's
    final label, as ``validation.selectors.retraining_rows`` gives them (the validation app
    decides which examples count and their labels; this module only trains). A row whose
    fields no longer fit the task config is left out (logged).
    """
    examples = []
    for row in rows:
        fields = {**(row["input"] or {}), **(row["target"] or {})}
        example, reason = example_from_row(task, fields, uid=f"example-{row['id']}", source="validated", round_number=row["round"])
        if example is None:
            logger.warning("validated example %s left out of training: %s", row["id"], reason)
            continue
        examples.append(example)
    return examples


def selection_examples(task: Task, uids: list[str]) -> list[TrainingExample]:
    """Return the training examples of a data-centric selection: the pool items ``uids``, in that order.

    The pool is the dataset named by the task kind's ``training_pool``. Raises ``RuleError``
    (``bad_selection``) naming the first uid that is not in the pool, or a pool item whose
    target no longer fits the task.
    """
    pool = Dataset.objects.get(task=task, name=task.spec.training_pool(task.config))
    items = {row["uid"]: row for row in DatasetItem.objects.filter(dataset=pool, uid__in=uids).values("uid", "input", "target")}
    examples = []
    for uid in uids:
        row = items.get(uid)
        if row is None:
            raise RuleError("bad_selection", f"{uid!r} is not in the pool '{pool.name}'.", field="uids")
        example, reason = example_from_row(task, {**(row["input"] or {}), **(row["target"] or {})}, uid=uid, source="selection")
        if example is None:
            raise RuleError("bad_selection", f"Pool item {uid!r} cannot be trained on: {reason}.", field="uids")
        examples.append(example)
    return examples
