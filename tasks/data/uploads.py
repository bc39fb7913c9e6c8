"""Contexts and dataset files uploaded through the owner's console: store, map, import.

One flow for the console page, the REST API and the admin:

1. ``store_upload`` keeps the file (Django's upload handling and storage, at most
   ``settings.CONSOLE_UPLOAD_MAX_BYTES``), reads its columns (the CSV header, or the keys and
   dotted paths of the first JSON records) and counts its records, and returns an ``Upload``
   waiting for its mapping.
2. ``upload_fields`` lists the task fields the file must give; ``suggest_mapping`` proposes a
   column for each; ``preview_rows`` shows the first records through a mapping.
3. ``start_import`` checks the mapping and imports with ``tasks.data.importers`` (all-or-nothing;
   the first ``MAX_ERRORS_SHOWN`` line-numbered problems and their count are kept); a file of
   more than ``settings.CONSOLE_UPLOAD_JOB_ROWS`` records goes to an RQ job
   (``tasks.jobs.run_upload``) whose progress ``upload_progress`` reads from the cache.
"""

from __future__ import annotations

import csv
import uuid
from pathlib import Path

import django_rq
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from dynabench.errors import FieldErrors, NotAllowed, RuleError
from dynabench.filestore import AllOrNothing
from dynabench.jsonbounds import loads_bounded
from tasks.data.importers.contexts import import_contexts
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.errors import ImportErrors, ImportRowError
from tasks.data.importers.files import FileSpec
from tasks.data.importers.mapping import MISSING, lookup
from tasks.models import Dataset, Round, Task, Upload

MAX_ERRORS_SHOWN = 20
PREVIEW_ROWS = 5
UID_FROM_LINE = "__line__"
UID_FROM_CONTENT = "__content__"
"""Special values of the uid column: the line number, or a hash of the mapped content."""
_SCAN_RECORDS = 50
_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
QUEUE = "default"


def _progress_key(upload_id: int) -> str:
    return f"console:upload:{upload_id}:progress"


def _check_owner(task: Task, user) -> None:
    if not task.is_owner(user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may upload files to it")


# --- 1. storing the file ------------------------------------------------------------------


def _flatten(record: dict, prefix: str = "") -> list[str]:
    """The keys of a JSON record and the dotted paths into its nested objects (lists excluded)."""
    paths = []
    for key, value in record.items():
        path = f"{prefix}{key}"
        paths.append(path)
        if isinstance(value, dict):
            paths.extend(_flatten(value, prefix=f"{path}."))
    return paths


def _scan(path: Path, fmt: str) -> tuple[list[str], int]:
    """Return ``(columns, records)`` of a stored file; unreadable lines are left for the import
    to report with their numbers."""
    columns: list[str] = []
    records = 0
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        if fmt == "csv":
            reader = csv.reader(fh)
            try:
                columns = next(reader)
            except (StopIteration, csv.Error):
                return [], 0
            for row in reader:
                if row and any(cell.strip() for cell in row):
                    records += 1
            return columns, records
        for line in fh:
            if not line.strip():
                continue
            records += 1
            if records <= _SCAN_RECORDS:
                try:
                    record = loads_bounded(line)
                except ValueError:  # not JSON, or out of bounds: the import reports the line
                    continue
                if isinstance(record, dict):
                    columns.extend(p for p in _flatten(record) if p not in columns)
    return columns, records


def _clean_options(task: Task, target: str, options: dict) -> dict:
    """Check where the file goes: a round of the task (contexts), or a dataset (name, split, access)."""
    errors: dict[str, list[str]] = {}
    if target == Upload.Target.CONTEXTS:
        number = options.get("round")
        try:
            number = int(number)
        except (TypeError, ValueError):
            raise FieldErrors("invalid_upload", {"round": ["Choose the round the contexts are for."]}) from None
        if not Round.objects.filter(task=task, number=number).exists():
            raise FieldErrors("invalid_upload", {"round": [f"Task {task.code} has no round {number}; open it first."]})
        return {"round": number}
    if target != Upload.Target.DATASET:
        raise FieldErrors("invalid_upload", {"target": [f"Upload contexts or a dataset, not '{target}'."]})
    name = (options.get("name") or "").strip()
    if not name:
        errors["name"] = ["Give the dataset a name, e.g. sentiment-r2-extra."]
    elif slugify(name) != name:
        errors["name"] = [f"Use lower-case letters, digits and hyphens, e.g. '{slugify(name)}'."]
    split = options.get("split") or ""
    if split not in Dataset.Split.values:
        errors["split"] = [f"Choose one of {', '.join(v for v in Dataset.Split.values if v)} (or none)."]
    access = options.get("access") or Dataset.Access.SCORING
    if access not in Dataset.Access.values:
        errors["access"] = [f"Choose one of {', '.join(Dataset.Access.values)}."]
    visibility = options.get("label_visibility") or ""
    if visibility and visibility not in Dataset.LabelVisibility.values:
        errors["label_visibility"] = [f"Choose one of {', '.join(Dataset.LabelVisibility.values)} (or the default)."]
    number = options.get("round")
    if number not in (None, ""):
        try:
            number = int(number)
        except (TypeError, ValueError):
            number = -1
        if not Round.objects.filter(task=task, number=number).exists():
            errors["round"] = [f"Task {task.code} has no round {options.get('round')}."]
    else:
        number = None
    if errors:
        raise FieldErrors("invalid_upload", errors)
    return {"name": name, "split": split, "access": access, "round": number, "label_visibility": visibility or None}


def store_upload(*, task: Task, acting_user, file, target: str, options: dict) -> Upload:
    """Keep an uploaded ``file`` (a Django ``UploadedFile``) for ``task`` and return its ``Upload``
    (status ``mapping``).

    ``target``: ``contexts`` (``options["round"]``: an existing round number) or ``dataset``
    (``options``: ``name`` (a slug), ``split``, ``access``, optional ``round`` and
    ``label_visibility``, by default hidden for a test split or a scoring dataset). The file must
    end in ``.csv``, ``.jsonl``/``.ndjson``/``.json`` and hold at most
    ``settings.CONSOLE_UPLOAD_MAX_BYTES``. Raises ``NotAllowed`` for a non-owner, ``FieldErrors``
    naming the field at fault (``file``, ``round``, ``name``, ...; ``upload_too_large`` has status
    413); nothing is kept then, nor when the storage fails (a full disk: ``OSError``). Web and API
    routes refuse a file over the limit while it arrives (``settings.UPLOAD_LIMITS``), so the size
    check here is for other callers.
    """
    _check_owner(task, acting_user)
    limit = settings.CONSOLE_UPLOAD_MAX_BYTES
    if file is None:
        raise FieldErrors("invalid_upload", {"file": ["Choose a CSV or JSONL file."]})
    fmt = _FORMATS.get(Path(file.name).suffix.lower())
    if fmt is None:
        raise FieldErrors("invalid_upload", {"file": [f"'{file.name}' is not a .csv or .jsonl file."]})
    if file.size > limit:
        raise FieldErrors(
            "upload_too_large", {"file": [f"'{file.name}' has {file.size:,} bytes; the limit is {limit:,} bytes. Split it."]},
            status_code=413,
        )
    if file.size == 0:
        raise FieldErrors("invalid_upload", {"file": [f"'{file.name}' is empty."]})
    options = _clean_options(task, target, options or {})
    upload = Upload(
        task=task, uploaded_by=acting_user, target=target, original_name=Path(file.name).name[:255], format=fmt,
        size=file.size, options=options,
    )
    # The file is removed again when anything below fails (a full disk while it is written included).
    with AllOrNothing(upload.file.storage) as stored:
        upload.file = stored.save(upload.file.field.generate_filename(upload, f"{uuid.uuid4().hex}.{fmt}"), file)
        upload.columns, upload.rows = _scan(Path(upload.file.path), fmt)
        if fmt == "csv" and not upload.columns:
            raise FieldErrors("invalid_upload", {"file": [f"'{file.name}' has no header row: line 1 must name the columns."]})
        upload.mapping = suggest_mapping(upload)
        upload.save()
    return upload


# --- 2. the mapping -----------------------------------------------------------------------


def upload_fields(upload: Upload) -> list[tuple[str, str, bool]]:
    """``[(task field, label, required)]`` the file gives: the task's context fields for
    contexts; for a dataset the model inputs and the target (required), then the other
    context and input fields (optional)."""
    config = upload.task.config
    if upload.target == Upload.Target.CONTEXTS:
        return [(f["name"], f.get("label", f["name"]), True) for f in config.get("context_fields", [])]
    labels = {f["name"]: f.get("label", f["name"]) for f in config.get("context_fields", []) + config.get("input_fields", [])}
    inputs = list(config["model_inputs"])
    target = upload.task.spec.target_field
    fields = [(name, labels.get(name, name), True) for name in inputs] + [(target, target, True)]
    fields += [(name, label, False) for name, label in labels.items() if name not in inputs]
    return fields


def suggest_mapping(upload: Upload) -> dict:
    """Propose ``{"fields": {task field: column}, "uid": column, "tag": column}``: a column of
    the same name as each field, the ``uid``/``id`` column if any (else a hash of the content),
    a ``tag`` column if any."""
    columns = upload.columns
    fields = {name: name for name, _, _ in upload_fields(upload) if name in columns}
    uid = next((c for c in ("uid", "id", "text_id") if c in columns), UID_FROM_CONTENT)
    return {"fields": fields, "uid": uid, "tag": "tag" if "tag" in columns else ""}


def _clean_mapping(upload: Upload, mapping: dict) -> dict:
    """Check that every required field has a column, and that the named columns exist."""
    columns = set(upload.columns)
    errors: dict[str, list[str]] = {}
    fields = dict((mapping or {}).get("fields") or {})
    known = {name for name, _, _ in upload_fields(upload)}
    for name in sorted(set(fields) - known):
        errors[name] = [f"'{name}' is not a field of this upload; it takes {', '.join(sorted(known))}."]
    for name, _, required in upload_fields(upload):
        column = (fields.get(name) or "").strip()
        if not column:
            fields.pop(name, None)
            if required:
                errors[name] = [f"Choose the column that holds {name}."]
        elif column not in columns:
            errors[name] = [f"The file has no column '{column}'."]
        else:
            fields[name] = column
    uid = (mapping or {}).get("uid") or UID_FROM_CONTENT
    if uid not in (UID_FROM_LINE, UID_FROM_CONTENT) and uid not in columns:
        errors["uid"] = [f"The file has no column '{uid}'."]
    tag = (mapping or {}).get("tag") or ""
    if tag and tag not in columns:
        errors["tag"] = [f"The file has no column '{tag}'."]
    if errors:
        raise FieldErrors("invalid_mapping", errors)
    return {"fields": fields, "uid": uid, "tag": tag}


def _file_spec(upload: Upload) -> FileSpec:
    mapping = upload.mapping
    uid = mapping.get("uid") or UID_FROM_CONTENT
    uid_from = {UID_FROM_LINE: "line", UID_FROM_CONTENT: "content"}.get(uid, "field")
    return FileSpec(
        path=Path(upload.file.path), format=upload.format, mapping=dict(mapping.get("fields") or {}),
        uid_field=uid if uid_from == "field" else "uid", uid_from=uid_from, tag_field=mapping.get("tag") or None,
    )


def _bounded_or_none(line: str):
    """A JSONL line read with the bounded reader, or None when it is refused (the import reports it)."""
    try:
        return loads_bounded(line)
    except ValueError:
        return None


def preview_rows(upload: Upload, mapping: dict | None = None, *, limit: int = PREVIEW_ROWS) -> list[dict]:
    """The first ``limit`` records as ``{task field: value}`` through ``mapping`` (default the
    upload's); a value the record lacks shows as ``None``. Reads only the start of the file."""
    fields = dict(((mapping or upload.mapping).get("fields") or {}))
    rows = []
    with open(upload.file.path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        records = csv.DictReader(fh) if upload.format == "csv" else (_bounded_or_none(line) for line in fh if line.strip())
        try:
            for record in records:
                if not isinstance(record, dict):
                    continue
                rows.append({name: (None if (v := lookup(record, column)) is MISSING else v) for name, column in fields.items()})
                if len(rows) >= limit:
                    break
        except csv.Error:
            pass  # the import reports the line
    return rows


# --- 3. the import ------------------------------------------------------------------------


@transaction.atomic
def start_import(*, upload: Upload, acting_user, mapping: dict) -> Upload:
    """Check ``mapping`` (``{"fields": {task field: column}, "uid": column | UID_FROM_LINE |
    UID_FROM_CONTENT, "tag": column or ""}``) and import the upload.

    Small files are imported at once; a file of more than ``settings.CONSOLE_UPLOAD_JOB_ROWS``
    records is queued (status ``queued``) as ``tasks.jobs.run_upload`` on the ``default`` RQ
    queue when this transaction commits. An upload that is queued, running or done cannot be
    started again (upload the file again to import it once more). Raises ``NotAllowed``,
    ``FieldErrors`` (``invalid_mapping``, naming each field) or ``RuleError``
    ``upload_not_waiting``. Returns the upload (imported, refused or queued).
    """
    _check_owner(upload.task, acting_user)
    locked = Upload.objects.select_for_update().get(pk=upload.pk)
    if locked.status not in (Upload.Status.MAPPING, Upload.Status.FAILED):
        raise RuleError("upload_not_waiting", f"This upload is {locked.get_status_display().lower()}; upload the file again to import it again.")
    locked.mapping = _clean_mapping(locked, mapping)
    locked.errors, locked.error_count, locked.result = [], 0, {}
    if locked.rows > settings.CONSOLE_UPLOAD_JOB_ROWS:
        locked.status = Upload.Status.QUEUED
        locked.job_id = f"upload-{locked.pk}-{uuid.uuid4().hex[:8]}"
        locked.save()
        cache.set(_progress_key(locked.pk), 0.0, timeout=24 * 3600)
        job_id = locked.job_id
        transaction.on_commit(
            lambda: django_rq.get_queue(QUEUE).enqueue("tasks.jobs.run_upload", locked.pk, job_id=job_id, job_timeout=3600)
        )
        return locked
    locked.save()
    return run_upload(locked.pk)


def run_upload(upload_id: int) -> Upload:
    """Import upload ``upload_id`` with its mapping (``tasks.data.importers``, all-or-nothing) and
    record the outcome: ``done`` with ``result`` (added, already present, repeats skipped), or
    ``failed`` with the first ``MAX_ERRORS_SHOWN`` problems (``{"line", "message"}``) and
    ``error_count``. Reading progress goes to the cache (``upload_progress``)."""
    upload = Upload.objects.select_related("task").get(pk=upload_id)
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.RUNNING)
    key = _progress_key(upload.pk)

    def on_progress(done: int, size: int) -> None:
        cache.set(key, done / size if size else 1.0, timeout=24 * 3600)

    spec = _file_spec(upload)
    options = upload.options
    try:
        if upload.target == Upload.Target.CONTEXTS:
            result = import_contexts(
                task=upload.task, round_number=options["round"], spec=spec, progress=False,
                max_errors=MAX_ERRORS_SHOWN, on_progress=on_progress,
            )
        else:
            result = import_dataset(
                task=upload.task, name=options["name"], spec=spec, round_number=options.get("round"),
                access=options.get("access"), split=options.get("split"), label_visibility=options.get("label_visibility"),
                progress=False,
                max_errors=MAX_ERRORS_SHOWN, on_progress=on_progress,
            )
    except ImportErrors as refused:
        upload.status = Upload.Status.FAILED
        upload.errors = [{"line": e.line, "message": e.reason} for e in refused.errors]
        upload.error_count = refused.total
    except ImportRowError as refused:
        upload.status, upload.error_count = Upload.Status.FAILED, 1
        upload.errors = [{"line": refused.line, "message": refused.reason}]
    except RuleError as refused:
        upload.status, upload.error_count = Upload.Status.FAILED, 1
        upload.errors = [{"line": None, "message": refused.message}]
    except Exception:
        Upload.objects.filter(pk=upload.pk).update(
            status=Upload.Status.FAILED, error_count=1, finished_at=timezone.now(),
            errors=[{"line": None, "message": "The import stopped on a server error; nothing was imported. Try again."}],
        )
        raise
    else:
        upload.status = Upload.Status.DONE
        upload.result = {
            "added": result.added, "unchanged": result.unchanged, "repeated": result.repeated,
            "filtered_out": result.filtered_out, "summary": result.summary(), "checksum": result.checksum,
        }
    upload.finished_at = timezone.now()
    upload.save(update_fields=["status", "errors", "error_count", "result", "finished_at"])
    cache.set(key, 1.0, timeout=24 * 3600)
    return upload


def upload_progress(upload: Upload) -> float:
    """Return how far the import of ``upload`` has read its file, 0..1 (1 once finished)."""
    if upload.status in (Upload.Status.DONE, Upload.Status.FAILED):
        return 1.0
    if upload.status == Upload.Status.MAPPING:
        return 0.0
    return float(cache.get(_progress_key(upload.pk)) or 0.0)
