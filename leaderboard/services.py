"""Model submissions and the owner's actions on them: the rules every surface shares.

The HTMX pages, the REST API and the admin call these functions; they raise ``RuleError``
(400), ``NotAllowed`` (403) or ``RateLimited`` (429) with a message saying what to fix, and
on a refusal nothing is stored (no row, no file).

- :func:`submit_model_archive`: a zip or tar(.gz) of a Hugging Face directory. Checked
  **before anything is loaded**: size, member paths (no absolute paths, no ``..``), member
  kinds (no symlinks, hard links or devices), pickle or code files, then unpacked into a
  staging folder and checked by the registry's ``check_model_directory`` (safetensors,
  config, architecture for the task kind, labels matching the task's).
- :func:`submit_predictions`: a JSONL prediction file covering every item of the task's
  scoring datasets.
- :func:`register_model_directory`: a task owner registers a directory already on the server.
- :func:`set_model_visibility`: publish / anonymise (owner only).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RateLimited, RuleError
from leaderboard.error_codes import LeaderboardErrorCode as Code
from tasks.config import normalise_label
from tasks.model_checks import CODE_SUFFIXES, PICKLE_SUFFIXES, check_model_directory, directory_checksum
from tasks.models import Dataset, DatasetItem, MLModel, Task

MiB = 1024 * 1024
MAX_MEMBERS = 10_000
MAX_LISTED = 10


def _setting(name: str, default):
    return getattr(settings, name, default)


def max_archive_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_BYTES", 2048 * MiB))


def max_unpacked_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_UNPACKED_BYTES", 4096 * MiB))


def max_predictions_bytes() -> int:
    return int(_setting("PREDICTIONS_MAX_BYTES", 200 * MiB))


def daily_submission_limit() -> int:
    return int(_setting("MODEL_SUBMISSIONS_PER_DAY", 5))


def models_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "models"


# --- shared checks -----------------------------------------------------------------------


def check_can_submit(*, user, task: Task, name: str, rate_limited: bool = True) -> str:
    """Return the cleaned model name, or raise when ``user`` may not submit to ``task`` now.

    Rules: logged in; the task is active; a name of 1–200 characters; at most
    ``settings.MODEL_SUBMISSIONS_PER_DAY`` submissions in the last 24 hours (superusers are
    exempt, and so are platform scripts that pass ``rate_limited=False``), else ``RateLimited``.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to submit a model.")
    if not task.active:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' is not active; it takes no submissions.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the model a name of 1 to 200 characters.", field="name")
    limit = daily_submission_limit()
    if rate_limited and not user.is_superuser:
        since = timezone.now() - timedelta(days=1)
        recent = MLModel.objects.filter(owner=user, created_at__gte=since).order_by("created_at")
        count = recent.count()
        if count >= limit:
            next_at = recent.first().created_at + timedelta(days=1)
            raise RateLimited(
                Code.DAILY_LIMIT,
                f"You have submitted {count} models in the last 24 hours, the daily limit is {limit}. "
                f"You can submit again after {next_at:%Y-%m-%d %H:%M} UTC.",
            )
    return name


def _enqueue_evaluation(model_id: int) -> None:
    from leaderboard.jobs import enqueue_evaluation

    transaction.on_commit(lambda: enqueue_evaluation(model_id))


# --- archives ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One archive entry: its normalised relative path, kind (file, dir, link, special) and size."""

    name: str
    kind: str
    size: int


def _stage_upload(upload, *, max_bytes: int, what: str, directory: Path) -> Path:
    """Copy ``upload`` (a Django UploadedFile, file object or bytes) to a temporary file, capped."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".upload-", dir=directory)
    path = Path(name)
    total = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in _chunks(upload):
                total += len(chunk)
                if total > max_bytes:
                    raise RuleError(
                        Code.ARCHIVE_TOO_BIG,
                        f"The {what} is larger than the limit of {max_bytes / MiB:,.0f} MiB. Leave out optimizer "
                        "states, checkpoints and anything the model does not need to run.",
                        field="upload", status_code=413,
                    )
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def _chunks(upload):
    if isinstance(upload, (bytes, bytearray)):
        yield bytes(upload)
        return
    if hasattr(upload, "chunks"):
        if hasattr(upload, "seek"):
            upload.seek(0)
        yield from upload.chunks()
        return
    while True:
        chunk = upload.read(MiB)
        if not chunk:
            return
        yield chunk


def _safe_name(raw: str) -> str:
    """Return the member's relative POSIX path, or raise when it could land outside the folder."""
    name = raw.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in path.parts or "\x00" in name:
        raise RuleError(
            Code.UNSAFE_PATH,
            f"The archive entry '{raw}' points outside the archive (absolute path or '..'). Pack the model folder "
            "with relative paths, e.g. `cd parent && zip -r model.zip model-dir`.",
            field="upload",
        )
    return str(PurePosixPath(*[p for p in path.parts if p not in ("", ".")])) if path.parts else ""


def _zip_members(archive: zipfile.ZipFile) -> list[Member]:
    members = []
    for info in archive.infolist():
        mode = (info.external_attr >> 16) & 0xFFFF
        name = _safe_name(info.filename)
        if stat.S_ISLNK(mode):
            kind = "link"
        elif info.is_dir():
            kind = "dir"
        elif mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            kind = "special"
        else:
            kind = "file"
        members.append(Member(name, kind, info.file_size))
    return members


def _tar_members(archive: tarfile.TarFile) -> list[Member]:
    members = []
    for info in archive.getmembers():
        name = _safe_name(info.name)
        if info.issym() or info.islnk():
            kind = "link"
        elif info.isdir():
            kind = "dir"
        elif info.isfile():
            kind = "file"
        else:
            kind = "special"
        members.append(Member(name, kind, info.size))
    return members


def _open_archive(path: Path):
    """Return ``("zip" | "tar", opened archive)`` or raise ``not_an_archive``."""
    not_archive = RuleError(
        Code.NOT_AN_ARCHIVE,
        "The upload is not a zip or tar(.gz) archive. Pack the model folder with `zip -r model.zip DIR` "
        "or `tar czf model.tar.gz DIR`.",
        field="upload",
    )
    try:
        if zipfile.is_zipfile(path):
            return "zip", zipfile.ZipFile(path)
        if tarfile.is_tarfile(path):
            return "tar", tarfile.open(path, "r:*")
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as error:
        raise RuleError(not_archive.code, f"{not_archive.message} ({error})", field="upload")
    raise not_archive


def list_archive(path: Path) -> list[Member]:
    """Return the archive's members, checking every path is relative and inside the archive."""
    kind, archive = _open_archive(path)
    try:
        with archive:
            return _zip_members(archive) if kind == "zip" else _tar_members(archive)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise RuleError(Code.NOT_AN_ARCHIVE, f"The archive is damaged and cannot be read ({error}).", field="upload")


def check_members(members: list[Member]) -> None:
    """Refuse links, special files, pickle or code files, too many or too large entries, no weights."""
    listed = lambda names: ", ".join(names[:MAX_LISTED]) + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
    if len(members) > MAX_MEMBERS:
        raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive has {len(members):,} entries; at most {MAX_MEMBERS:,} are accepted.", field="upload")
    links = [m.name for m in members if m.kind == "link"]
    if links:
        raise RuleError(
            Code.LINK_IN_ARCHIVE,
            f"The archive contains links ({listed(links)}); links are refused. Replace them with the files themselves "
            "(`zip -r` without `--symlinks`, or `tar --dereference`).",
            field="upload",
        )
    special = [m.name for m in members if m.kind == "special"]
    if special:
        raise RuleError(Code.SPECIAL_FILE_IN_ARCHIVE, f"The archive contains device or pipe entries ({listed(special)}); only regular files and folders are accepted.", field="upload")
    files = [m for m in members if m.kind == "file"]
    pickles = [m.name for m in files if m.name.lower().endswith(PICKLE_SUFFIXES)]
    if pickles:
        raise RuleError(
            Code.PICKLE_WEIGHTS,
            f"Pickle-based files are never loaded: remove {listed(pickles)} and ship the weights as model.safetensors "
            "(save_pretrained(..., safe_serialization=True)).",
            field="upload",
        )
    code = [m.name for m in files if m.name.lower().endswith(CODE_SUFFIXES)]
    if code:
        raise RuleError(Code.PICKLE_WEIGHTS, f"Code files are never run: remove {listed(code)}; use an architecture built into transformers.", field="upload")
    total = sum(m.size for m in files)
    if total > max_unpacked_bytes():
        raise RuleError(
            Code.ARCHIVE_TOO_BIG,
            f"The archive unpacks to {total / MiB:,.0f} MiB; the limit is {max_unpacked_bytes() / MiB:,.0f} MiB.",
            field="upload", status_code=413,
        )
    if not any(PurePosixPath(m.name).name.endswith(".safetensors") for m in files):
        raise RuleError(
            Code.NO_WEIGHTS,
            "The archive has no .safetensors weights. Save the model with save_pretrained(..., safe_serialization=True) "
            "and pack the whole folder (config.json, model.safetensors, tokenizer files).",
            field="upload",
        )


def extract_archive(path: Path, members: list[Member], dest: Path) -> None:
    """Write the checked ``members`` of the archive at ``path`` under ``dest``, never beyond declared sizes."""
    kind, archive = _open_archive(path)
    dest_resolved = dest.resolve()
    with archive:
        entries = archive.infolist() if kind == "zip" else archive.getmembers()
        for entry, member in zip(entries, members):
            target = (dest / member.name) if member.name else dest
            if not target.resolve().is_relative_to(dest_resolved):  # defence in depth after _safe_name
                raise RuleError(Code.UNSAFE_PATH, f"The archive entry '{member.name}' points outside the archive.", field="upload")
            if member.kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.open(entry) if kind == "zip" else archive.extractfile(entry)
            written = 0
            with source, open(target, "xb") as out:
                while chunk := source.read(MiB):
                    written += len(chunk)
                    if written > member.size:
                        raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive entry '{member.name}' is larger than it declares.", field="upload")
                    out.write(chunk)


def _model_folder(staging: Path) -> Path:
    """The folder holding config.json: the staging folder, or its single top-level folder."""
    if (staging / "config.json").is_file():
        return staging
    children = [c for c in staging.iterdir() if not c.name.startswith("__MACOSX")]
    if len(children) == 1 and children[0].is_dir() and (children[0] / "config.json").is_file():
        return children[0]
    raise RuleError(
        Code.BAD_CONFIG,
        "No config.json at the top of the archive (or of its single top-level folder). Pack the folder written by "
        "save_pretrained().",
        field="upload",
    )


def submit_model_archive(
    *, user, task: Task, upload, name: str, description: str = "", anonymous: bool = False, published: bool = True,
    rate_limited: bool = True,
) -> MLModel:
    """Check, unpack and register a model archive of ``task`` for ``user``; queue its evaluation.

    Returns the new ``MLModel`` (kind ``hf_directory``, status ``queued``) whose ``path`` is
    ``MEDIA_ROOT/models/<id>/`` and ``checksum`` the sha256 of the unpacked folder. The
    evaluation job is enqueued when the transaction commits.

    Raises ``RateLimited`` (daily limit), ``RuleError`` with codes ``archive_too_big``,
    ``not_an_archive``, ``unsafe_path``, ``link_in_archive``, ``special_file_in_archive``,
    ``pickle_weights``, ``no_weights``, ``bad_config`` or the registry's ``model_*`` codes
    (architecture, labels, tokenizer). Nothing is stored when it raises.
    """
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited)
    root = models_root()
    archive_path = _stage_upload(upload, max_bytes=max_archive_bytes(), what="archive", directory=root)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    final = None
    try:
        members = list_archive(archive_path)
        check_members(members)
        extract_archive(archive_path, members, staging)
        folder = _model_folder(staging)
        check_model_directory(folder, task=task)
        with transaction.atomic():
            model = MLModel.objects.create(
                task=task, owner=user, name=name, description=description or "", kind=MLModel.Kind.HF_DIRECTORY,
                published=published, anonymous=anonymous, status=MLModel.Status.QUEUED,
            )
            final = root / str(model.pk)
            if final.exists():
                shutil.rmtree(final)
            os.replace(folder, final)
            model.path = str(final)
            model.checksum = directory_checksum(final)
            model.save(update_fields=["path", "checksum"])
            _enqueue_evaluation(model.pk)
        return model
    except BaseException:
        if final is not None and final.exists():
            shutil.rmtree(final, ignore_errors=True)
        raise
    finally:
        archive_path.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)


def register_model_directory(
    *, actor, task: Task, path, name: str, description: str = "", owner=None, published: bool = False,
    anonymous: bool = False,
) -> MLModel:
    """Register a model directory already on the server for ``task`` (task owners and admins).

    The directory stays where it is; it is checked like an uploaded archive (safetensors,
    architecture, labels) and its evaluation is queued. Raises ``NotAllowed`` when ``actor``
    does not own the task, ``RuleError`` when the directory is refused.
    """
    if not task.is_owner(actor):
        raise NotAllowed(Code.NOT_OWNER, f"Only owners of the task '{task.code}' can register model directories.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the model a name of 1 to 200 characters.", field="name")
    folder = Path(path).expanduser()
    if not folder.is_absolute():
        raise RuleError(Code.BAD_DIRECTORY, f"Give the absolute path of the model directory (got '{path}').", field="path")
    check_model_directory(folder, task=task)
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=owner or actor, name=name, description=description or "", kind=MLModel.Kind.HF_DIRECTORY,
            path=str(folder.resolve()), checksum=directory_checksum(folder), published=published, anonymous=anonymous,
            status=MLModel.Status.QUEUED,
        )
        _enqueue_evaluation(model.pk)
    return model


# --- prediction files --------------------------------------------------------------------


def scoring_items(task: Task) -> dict[str, dict[str, int]]:
    """Return ``{dataset name: {item uid: item id}}`` for the task's scoring datasets."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for dataset in Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).values_list("name", flat=True):
        out[dataset] = {}
    rows = DatasetItem.objects.filter(dataset__task=task, dataset__access=Dataset.Access.SCORING)
    for dataset, uid, pk in rows.values_list("dataset__name", "uid", "pk").iterator(chunk_size=5000):
        out[dataset][uid] = pk
    return dict(out)


def _listing(pairs: list, what: str) -> str:
    shown = "; ".join(pairs[:MAX_LISTED])
    more = f" (and {len(pairs) - MAX_LISTED} more)" if len(pairs) > MAX_LISTED else ""
    return f"{what}: {shown}{more}"


def parse_predictions(task: Task, lines, *, datasets: dict[str, dict[str, int]], require_all: bool = True) -> dict:
    """Return ``{(dataset, uid): label or answer}`` from JSONL ``lines`` (bytes or str).

    Each line: ``{"uid": ..., "label": ...}`` (classification; labels or their aliases) or
    ``{"uid": ..., "answer": "..."}`` (extractive QA), optionally ``"dataset": name`` (needed
    when a uid occurs in two scoring datasets). Collects every problem, then raises one
    ``RuleError`` that lists them with line numbers: invalid JSON or encoding, missing fields,
    invalid labels, duplicates, unknown or ambiguous uids, and (``require_all``) the items of
    scoring datasets that have no prediction.
    """
    field = "label" if task.kind == "classification" else "answer"
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
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems["not valid JSON"].append(f"line {number} ({error.msg})")
            continue
        if not isinstance(record, dict) or "uid" not in record or record.get(field) is None:
            problems[f"not an object with \"uid\" and \"{field}\""].append(f"line {number}")
            continue
        uid = str(record["uid"])
        value = record[field]
        if field == "label":
            label = normalise_label(task.config, value)
            if label is None:
                problems[f"invalid label (expected one of {', '.join(task.labels)})"].append(f"line {number}: {value!r}")
                continue
            value = label
        elif not isinstance(value, str):
            problems["the answer is not a string"].append(f"line {number}")
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


def submit_predictions(
    *, user, task: Task, upload, name: str, description: str = "", anonymous: bool = False, published: bool = True,
    rate_limited: bool = True,
) -> MLModel:
    """Check a JSONL predictions file against the task's scoring datasets, store it, queue its evaluation.

    Returns a new ``MLModel`` of kind ``predictions`` whose ``path`` is
    ``MEDIA_ROOT/models/<id>/predictions.jsonl`` (one normalised line per prediction:
    ``{"dataset", "uid", "label"|"answer"}``) and ``checksum`` its sha256. Raises
    ``RateLimited`` (daily limit), ``RuleError`` (``no_scoring_datasets``, ``bad_predictions``,
    ``incomplete_predictions``: each problem listed with line numbers). Nothing is stored when
    it raises.
    """
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited)
    datasets = scoring_items(task)
    if not datasets:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' has no scoring datasets yet, so predictions cannot be scored.")
    root = models_root()
    staged = _stage_upload(upload, max_bytes=max_predictions_bytes(), what="predictions file", directory=root)
    final_dir = None
    try:
        with open(staged, "rb") as fh:
            predictions = parse_predictions(task, fh, datasets=datasets)
        field = "label" if task.kind == "classification" else "answer"
        body = io.BytesIO()
        for (dataset, uid), value in predictions.items():
            body.write(json.dumps({"dataset": dataset, "uid": uid, field: value}, ensure_ascii=False).encode() + b"\n")
        data = body.getvalue()
        with transaction.atomic():
            model = MLModel.objects.create(
                task=task, owner=user, name=name, description=description or "", kind=MLModel.Kind.PREDICTIONS,
                published=published, anonymous=anonymous, status=MLModel.Status.QUEUED,
            )
            final_dir = root / str(model.pk)
            final_dir.mkdir(parents=True, exist_ok=True)
            path = final_dir / "predictions.jsonl"
            path.write_bytes(data)
            model.path = str(path)
            model.checksum = hashlib.sha256(data).hexdigest()
            model.save(update_fields=["path", "checksum"])
            _enqueue_evaluation(model.pk)
        return model
    except BaseException:
        if final_dir is not None:
            shutil.rmtree(final_dir, ignore_errors=True)
        raise
    finally:
        staged.unlink(missing_ok=True)


def read_predictions_file(model: MLModel) -> dict[tuple[str, str], str]:
    """Return ``{(dataset name, uid): label or answer}`` from a stored predictions model."""
    out = {}
    with open(model.path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                out[(record["dataset"], record["uid"])] = record.get("label", record.get("answer"))
    return out


# --- the owner's actions -----------------------------------------------------------------


def set_model_visibility(*, actor, model: MLModel, published: bool | None = None, anonymous: bool | None = None) -> MLModel:
    """Publish/unpublish or anonymise/de-anonymise ``model`` (its owner, or an admin).

    Raises ``NotAllowed`` for anyone else. The task's leaderboard is recomputed on commit.
    """
    if not (actor.is_authenticated and (actor.pk == model.owner_id or actor.is_superuser)):
        raise NotAllowed(Code.NOT_OWNER, "Only the model's owner can change how it is shown.")
    fields = []
    if published is not None:
        model.published = bool(published)
        fields.append("published")
    if anonymous is not None:
        model.anonymous = bool(anonymous)
        fields.append("anonymous")
    if fields:
        with transaction.atomic():
            model.save(update_fields=[*fields, "updated_at"])
            from leaderboard.jobs import enqueue_recompute

            task_id = model.task_id
            transaction.on_commit(lambda: enqueue_recompute(task_id))
    return model


# --- leaderboard configs: forks and frozen snapshots --------------------------------------


def save_leaderboard_config(
    *, user, task: Task, name: str, metric_weights: dict, dataset_weights: dict,
    missing_metric: str = "drop_metric", description: str = "", frozen: bool = False,
):
    """Save a weight set ("fork") of ``task``'s leaderboard, or a frozen snapshot of its ranking.

    Any logged-in user may save one; it is shared by the URL of its ``slug``. A frozen
    snapshot stores the ranked rows as they are now and never changes. Raises ``NotAllowed``
    for anonymous users, ``RuleError`` for a missing name or bad weights.
    """
    from leaderboard.models import LeaderboardConfig
    from leaderboard.selectors import leaderboard_table

    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to save a leaderboard.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the saved leaderboard a name of 1 to 200 characters.", field="name")
    table = leaderboard_table(task, metric_weights=metric_weights, dataset_weights=dataset_weights, missing_metric=missing_metric)
    config = LeaderboardConfig.objects.create(
        task=task, owner=user, name=name, description=description or "",
        metric_weights={**table.metric_weights, "_missing_metric": missing_metric},
        dataset_weights=table.dataset_weights, frozen=frozen,
        snapshot=({"rows": table.snapshot(), "datasets": table.datasets, "rules": table.rules,
                   "pending": [p["name"] for p in table.pending]} if frozen else []),
    )
    return config
