"""Import contexts for a round of a task from a JSONL or CSV file (``import_contexts``)."""

from __future__ import annotations

from dynabench.errors import RuleError
from tasks.data.images import ImagePaths
from tasks.data.importers.errors import ImportErrorCode, ImportRowError, Problems
from tasks.data.importers.files import FileSpec, Reader
from tasks.data.importers.mapping import RowMapper, image_fields
from tasks.data.importers.results import ImportResult, no_rows_error
from tasks.data.importers.writing import BatchWriter, Commits
from tasks.models import Context, Round, Task


def import_contexts(
    *, task: Task, round_number: int, spec: FileSpec, create_round: bool = False, progress: bool | None = None,
    max_errors: int = 1, on_progress=None,
) -> ImportResult:
    """Import contexts for ``task``'s round ``round_number`` from ``spec.path``.

    Each record gives the task's context fields (``task.config["context_fields"]``, e.g.
    ``premise`` for NLI, ``passage`` for QA, ``prompt`` for sentiment), read through
    ``spec.mapping``. With ``create_round`` a missing round is created *closed* (an owner
    opens it from the admin). All-or-nothing; raises ``ImportRowError`` (``"line N: ..."``)
    or ``RuleError`` and then stores nothing. ``max_errors`` > 1 checks the whole file and
    raises ``ImportErrors`` (the first ``max_errors`` problems and their total) instead;
    ``on_progress(bytes read, file size)`` reports reading. Returns the ``ImportResult``.
    """
    # 1. The task's context fields, read through the mapping (``mapping``); the file opened (``files``).
    names = [f["name"] for f in task.config.get("context_fields", [])]
    if not names:
        raise RuleError(ImportErrorCode.OPTIONS, f"task {task.code} has no context fields to import")
    mapper = RowMapper(spec, text_fields=names, optional_fields=[], extra_fields=[])
    problems = Problems(max_errors)
    reader = Reader(spec, progress=progress, problems=problems, on_progress=on_progress)
    images = ImagePaths(task)
    with Commits() as commits:
        # 2. The round, found or created closed (``writing.Commits`` takes it back if the import fails).
        with commits.step():
            round_ = Round.objects.select_for_update().filter(task=task, number=round_number).order_by().first()
            if round_ is None:
                if not create_round:
                    raise RuleError(
                        ImportErrorCode.OPTIONS,
                        f"task {task.code} has no round {round_number}; create it in the admin or pass --create-round",
                    )
                round_ = Round.objects.create(task=task, number=round_number, status=Round.Status.CLOSED)
                commits.made(round_)
        # 3. Each record filtered, mapped and written in batches (``writing.BatchWriter``).
        result = ImportResult(target=f"{task.code} round {round_number} contexts")
        writer = BatchWriter(
            model=Context, parent={"round": round_}, content_fields=("data", "tag"),
            describe=f"{task.code} round {round_number}", repeats_ok=spec.uid_from == "content", result=result,
            problems=problems, commits=commits,
        )
        for line, record in reader:
            try:
                if not mapper.matches(line, record):
                    result.filtered_out += 1
                    continue
                data = image_fields(images, line, mapper.fields(line, record))
                writer.add(line, mapper.uid(line, record, data), {"data": data, "tag": mapper.tag(line, record)})
            except ImportRowError as error:
                problems.add(error)
        # 4. The last batch; any refused line, or a file without rows, undoes the whole import.
        writer.flush()
        problems.raise_any()
        no_rows_error(spec, result)
    result.checksum = reader.checksum
    return result
