"""Import a dataset of a task from a JSONL or CSV file (``import_dataset``): its items' inputs and
targets, the dataset's settings when it is created, and its recorded content once imported."""

from __future__ import annotations

from pathlib import Path

from django.utils.text import slugify

from dynabench.errors import RuleError
from tasks.data.images import ImagePaths
from tasks.data.importers.errors import ImportErrorCode, ImportRowError, Problems
from tasks.data.importers.files import FileSpec, Reader
from tasks.data.importers.mapping import RowMapper, image_fields
from tasks.data.importers.results import ImportResult, no_rows_error
from tasks.data.importers.writing import BatchWriter, Commits
from tasks.kinds import TargetError
from tasks.models import Dataset, DatasetItem, Round, Task, default_label_visibility
from tasks.services import dataset_content_checksum, record_dataset_content


def _target(task: Task, mapper: RowMapper, line: int, record: dict, inputs: dict) -> dict:
    """Read the row's target with the task kind's rules (``task.spec.import_target``); raise ``ImportRowError``."""
    field = task.spec.target_field
    raw = mapper.value(line, record, field)
    try:
        return task.spec.import_target(task.config, raw, inputs, source=mapper.source(field))
    except TargetError as error:
        raise ImportRowError(line, str(error)) from None


def import_dataset(
    *,
    task: Task,
    name: str,
    spec: FileSpec,
    round_number: int | None = None,
    access: str | None = None,
    split: str | None = None,
    weight: float | None = None,
    progress: bool | None = None,
    label_visibility: str | None = None,
    max_errors: int = 1,
    on_progress=None,
) -> ImportResult:
    """Import dataset ``name`` of ``task`` from ``spec.path``; create the dataset if it is new.

    Items: ``input`` = ``{field: text}`` for each of ``task.config["model_inputs"]`` (plus any
    other context/input field named in ``spec.mapping``); ``target`` = ``{"label": ...}``
    (classification; labels normalised with ``tasks.kinds.normalise_label``, so ANLI's
    ``e/n/c`` load as ``entailment/neutral/contradiction``) or ``{"answers": [{"text",
    "answer_start"}]}`` (extractive QA, each answer checked against the passage).

    ``round_number``, ``access`` (scoring|standard), ``split``, ``weight`` and
    ``label_visibility`` (public|hidden; default ``models.default_label_visibility``: hidden for
    a test split or a scoring dataset) are set when the dataset is created; for an existing
    dataset any given value must equal the stored one. A round that does not exist yet is
    created closed (data imported for a past round, e.g. ANLI R1/R2/R3 into rounds 1/2/3).
    ``Dataset.source`` and ``source_checksum`` (sha256 of the file) record the last file imported
    into it; its item count, canonical checksum and version are recomputed
    (``tasks.services.record_dataset_content``), and when the content changed every model is
    scheduled on it once the import commits (``leaderboard_inputs_changed``).
    All-or-nothing; raises ``ImportRowError``/``RuleError`` (``ImportErrors`` with ``max_errors``
    > 1; ``on_progress`` as for ``import_contexts``).
    """
    # 1. The options, checked before the file is read.
    if slugify(name) != name:
        raise RuleError(ImportErrorCode.OPTIONS, f"dataset name '{name}' must be a slug (lower-case letters, digits, hyphens), e.g. '{slugify(name)}'")
    if access is not None and access not in Dataset.Access.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"access must be one of {', '.join(Dataset.Access.values)}")
    if label_visibility is not None and label_visibility not in Dataset.LabelVisibility.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"label_visibility must be one of {', '.join(Dataset.LabelVisibility.values)}")
    if round_number is not None and (not isinstance(round_number, int) or round_number < 1):
        raise RuleError(ImportErrorCode.OPTIONS, "round must be a positive integer")
    if split is not None and split not in Dataset.Split.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"split must be one of {', '.join(v for v in Dataset.Split.values if v)}")
    if weight is not None and weight < 0:
        raise RuleError(ImportErrorCode.OPTIONS, "weight must be ≥ 0")

    # 2. The task's fields, read through the mapping (``mapping``); the file opened (``files``).
    config = task.config
    model_inputs = list(config["model_inputs"])
    all_fields = [f["name"] for f in config.get("context_fields", [])] + [f["name"] for f in config.get("input_fields", [])]
    mapper = RowMapper(
        spec, text_fields=model_inputs, optional_fields=[f for f in all_fields if f not in model_inputs],
        extra_fields=[task.spec.target_field],
    )
    problems = Problems(max_errors)
    reader = Reader(spec, progress=progress, problems=problems, on_progress=on_progress)
    images = ImagePaths(task)

    with Commits() as commits:
        # 3. The round and the dataset, found or created (an existing dataset must agree with the options).
        with commits.step():
            round_ = None
            if round_number is not None:
                round_, made = Round.objects.get_or_create(task=task, number=round_number, defaults={"status": Round.Status.CLOSED})
                if made:
                    commits.made(round_)
            dataset = Dataset.objects.select_for_update().filter(task=task, name=name).order_by().first()
            wanted = {"round": round_, "access": access, "split": split, "weight": weight, "label_visibility": label_visibility}
            if dataset is None:
                access = access or Dataset.Access.SCORING
                dataset = Dataset.objects.create(
                    task=task, name=name, round=round_, access=access,
                    split=split or "", weight=1.0 if weight is None else weight,
                    label_visibility=label_visibility or default_label_visibility(split=split or "", access=access),
                )
                commits.made(dataset)
            else:
                for attr, value in wanted.items():
                    if value is not None and getattr(dataset, attr) != value:
                        raise RuleError(
                            ImportErrorCode.OPTIONS,
                            f"dataset {dataset} exists with {attr}={getattr(dataset, attr)}, not {value}; "
                            "change it in the admin or choose another name",
                        )
        # 4. Each record filtered, mapped, its target read (``_target``), written in batches (``writing.BatchWriter``).
        result = ImportResult(target=f"dataset {dataset}")
        writer = BatchWriter(
            model=DatasetItem, parent={"dataset": dataset}, content_fields=("input", "target", "tag"),
            describe=f"dataset {dataset}", repeats_ok=spec.uid_from == "content", result=result,
            problems=problems, commits=commits,
        )
        for line, record in reader:
            try:
                if not mapper.matches(line, record):
                    result.filtered_out += 1
                    continue
                inputs = image_fields(images, line, mapper.fields(line, record))
                target = _target(task, mapper, line, record, inputs)
                values = {"input": inputs, "target": target, "tag": mapper.tag(line, record), "metadata": mapper.metadata(line, record)}
                writer.add(line, mapper.uid(line, record, {"input": inputs, "target": target}), values)
            except ImportRowError as error:
                problems.add(error)
        # 5. The last batch; any refused line, or a file without rows, undoes the whole import.
        writer.flush()
        problems.raise_any()
        no_rows_error(spec, result)
        # 6. The dataset's content recorded (``tasks.services.record_dataset_content``).
        # Batched (SQLite): every item is read for the checksum before the short transaction that records it.
        content = dataset_content_checksum(dataset) if commits.batched else None
        with commits.step():
            if result.added:
                record_dataset_content(dataset, source=str(Path(spec.path).resolve()), source_checksum=reader.checksum, content=content)
            else:
                record_dataset_content(dataset, content=content)
    result.checksum = reader.checksum
    return result
