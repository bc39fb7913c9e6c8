"""Model submissions and the owner's actions on them: the rules every surface shares.

The HTMX pages, the REST API and the admin call these functions; they raise ``RuleError``
(400), ``NotAllowed`` (403) or ``RateLimited`` (429) with a message saying what to fix, and
on a refusal nothing is stored (no row, no file).

- :func:`submit_model_archive`: a zip or tar(.gz) of a Hugging Face directory. Checked in the
  request **before anything is loaded**: size, member paths (no absolute paths, no ``..``),
  member kinds (no symlinks, hard links or devices), pickle or code files, then its small
  files (config, tokenizer) are read into a skeleton folder and checked by the registry's
  ``check_model_directory`` (safetensors, config, architecture for the task kind, labels
  matching the task's) and the owner's storage quota is reserved. The archive goes to the
  storage and the job ``leaderboard.jobs.unpack_model`` (``leaderboard/unpacking.py``) unpacks
  the weights: the request never writes them.
- :func:`submit_predictions`: a JSONL prediction file covering every item of the task's
  scoring datasets (checked by ``leaderboard.predictions``).
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
import uuid
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from dynabench.errors import NotAllowed, RateLimited, RuleError
from dynabench.roles import has_role
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.jobs import enqueue_recompute, enqueue_selection_training, enqueue_unpack
from leaderboard.scheduling import schedule_evaluations, schedule_model
from leaderboard.models import LeaderboardConfig
from leaderboard.predictions import MAX_LISTED, parse_predictions, scoring_items
from leaderboard.selectors import leaderboard_table, snapshot_provenance
from tasks import access, artefacts
from tasks.model_checks import CODE_SUFFIXES, PICKLE_SUFFIXES, check_model_directory, directory_checksum, is_model_file
from tasks.models import Dataset, DatasetItem, MLModel, Task

MiB = 1024 * 1024
MAX_MEMBERS = 10_000


def _setting(name: str, default):
    return getattr(settings, name, default)


def max_archive_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_BYTES", 2048 * MiB))


def max_unpacked_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_UNPACKED_BYTES", 4096 * MiB))


def max_small_files_bytes() -> int:
    """Bytes of an archive's kept files other than weights (config, tokenizer) that the request reads
    to check the model at once (``settings.MODEL_ARCHIVE_MAX_SMALL_FILES_BYTES``, default 64 MiB)."""
    return int(_setting("MODEL_ARCHIVE_MAX_SMALL_FILES_BYTES", 64 * MiB))


def max_predictions_bytes() -> int:
    return int(_setting("PREDICTIONS_MAX_BYTES", 200 * MiB))


def daily_submission_limit() -> int:
    return int(_setting("MODEL_SUBMISSIONS_PER_DAY", 5))


def models_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "models"


# --- shared checks -----------------------------------------------------------------------


SUBMISSION_NAMES = {"model": "a model", "predictions": "a predictions file", "selection": "a selection of pool items"}


@dataclass(frozen=True)
class Allowance:
    """A user's submissions in the last 24 hours against the daily limit (models, predictions and
    selections alike: each is scored on the task's hidden sets).

    ``limit``/``used``/``remaining`` are counts (``limit`` None: not limited, e.g. an admin);
    ``next_at`` is when the oldest counted submission stops counting (None when nothing counts).
    """

    limit: int | None
    used: int
    remaining: int | None
    next_at: datetime | None = None


def submission_allowance(user) -> Allowance:
    """Return ``user``'s :class:`Allowance` now. Superusers are not limited (``limit`` None)."""
    since = timezone.now() - timedelta(days=1)
    recent = MLModel.objects.filter(owner=user, created_at__gte=since)
    used = recent.count()
    oldest = recent.order_by("created_at").values_list("created_at", flat=True).first()
    next_at = oldest + timedelta(days=1) if oldest else None
    if user.is_superuser:
        return Allowance(limit=None, used=used, remaining=None, next_at=next_at)
    limit = daily_submission_limit()
    return Allowance(limit=limit, used=used, remaining=max(limit - used, 0), next_at=next_at)


def check_submitter(*, user, task: Task) -> None:
    """Raise unless ``user`` may submit models, predictions or selections to ``task`` at all.

    Rules: logged in (``NotAllowed`` ``not_owner``); in the ``researcher`` role
    (``dynabench.roles.has_role``: ticked at sign-up or given by an admin; superusers pass) or an
    owner of the task (``NotAllowed`` ``not_researcher``, 403). The daily limit is not checked here.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to submit a model.")
    if not (has_role(user, "researcher") or task.is_owner(user)):
        raise NotAllowed(
            Code.NOT_RESEARCHER,
            "Submitting models, predictions or selections needs the researcher role, which this account does not "
            "have. Sign up with 'Researcher' ticked, or ask an admin to add the role to your account.",
        )


def check_can_submit(*, user, task: Task, name: str, rate_limited: bool = True, submission: str = "model") -> str:
    """Return the cleaned model name, or raise when ``user`` may not submit to ``task`` now.

    Rules: ``check_submitter`` (logged in, researcher role or task owner); the task is active;
    the task's kind takes this ``submission`` (``model``, ``predictions`` or ``selection``: its
    spec's ``submissions``, else ``wrong_submission``); a name of 1–200 characters; at most
    ``settings.MODEL_SUBMISSIONS_PER_DAY`` submissions in the last 24 hours
    (``submission_allowance``; superusers are exempt, and so are platform scripts that pass
    ``rate_limited=False``), else ``RateLimited``.
    """
    check_submitter(user=user, task=task)
    if not task.active:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' is not active; it takes no submissions.")
    if submission not in task.spec.submissions:
        takes = " or ".join(SUBMISSION_NAMES[s] for s in task.spec.submissions)
        raise RuleError(
            Code.WRONG_SUBMISSION, f"The task '{task.code}' takes {takes}, not {SUBMISSION_NAMES[submission]}.", field="upload"
        )
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the model a name of 1 to 200 characters.", field="name")
    allowance = submission_allowance(user)
    if rate_limited and allowance.remaining == 0:
        again = (f"You can submit again after {allowance.next_at:%Y-%m-%d %H:%M} UTC." if allowance.next_at
                 else "Ask an admin to raise it.")
        raise RateLimited(
            Code.DAILY_LIMIT,
            f"You have submitted {allowance.used} models in the last 24 hours, the daily limit is {allowance.limit}. {again}",
        )
    return name


def _enqueue_evaluation(model_id: int) -> None:
    """Queue the new model's evaluation runs (``scheduling.schedule_model``) once the transaction commits."""
    schedule_model(MLModel.objects.select_related("task").get(pk=model_id))


# --- archives ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One archive entry: its normalised relative path, type (file, dir, link, special) and size."""

    name: str
    type: str
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
    """Return ``("zip" | "tar", opened archive)`` (its format, then the archive) or raise ``not_an_archive``."""
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


def archive_kind(path: Path) -> str:
    """``"zip"`` or ``"tar"``: the format of the archive at ``path`` (``RuleError`` ``not_an_archive`` otherwise)."""
    found, archive = _open_archive(path)
    archive.close()
    return found


def list_archive(path: Path) -> list[Member]:
    """Return the archive's members, checking every path is relative and inside the archive."""
    archive_format, archive = _open_archive(path)
    try:
        with archive:
            return _zip_members(archive) if archive_format == "zip" else _tar_members(archive)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise RuleError(Code.NOT_AN_ARCHIVE, f"The archive is damaged and cannot be read ({error}).", field="upload")


def check_members(members: list[Member]) -> None:
    """Refuse links, special files, pickle or code files, too many or too large entries, no weights."""
    listed = lambda names: ", ".join(names[:MAX_LISTED]) + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
    if len(members) > MAX_MEMBERS:
        raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive has {len(members):,} entries; at most {MAX_MEMBERS:,} are accepted.", field="upload")
    links = [m.name for m in members if m.type == "link"]
    if links:
        raise RuleError(
            Code.LINK_IN_ARCHIVE,
            f"The archive contains links ({listed(links)}); links are refused. Replace them with the files themselves "
            "(`zip -r` without `--symlinks`, or `tar --dereference`).",
            field="upload",
        )
    special = [m.name for m in members if m.type == "special"]
    if special:
        raise RuleError(Code.SPECIAL_FILE_IN_ARCHIVE, f"The archive contains device or pipe entries ({listed(special)}); only regular files and folders are accepted.", field="upload")
    files = [m for m in members if m.type == "file"]
    seen, repeated = set(), []
    for member in members:
        if member.type == "dir":
            continue
        if member.name in seen:
            repeated.append(member.name)
        seen.add(member.name)
    if repeated:
        raise RuleError(
            Code.UNSAFE_PATH,
            f"The archive holds the same path more than once ({listed(repeated)}); each file may appear once. Pack the "
            "model folder again.",
            field="upload",
        )
    file_names = {m.name for m in files}
    under_files = [m.name for m in members if any(str(parent) in file_names for parent in PurePosixPath(m.name).parents)]
    if under_files:
        raise RuleError(
            Code.UNSAFE_PATH,
            f"The archive puts entries inside a path that is a file ({listed(under_files)}); a path cannot be both a file "
            "and a folder. Pack the model folder again.",
            field="upload",
        )
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
    total = kept_bytes(members)
    if total > max_unpacked_bytes():
        raise RuleError(
            Code.ARCHIVE_TOO_BIG,
            f"The archive unpacks to {total / MiB:,.0f} MiB of model files; the limit is {max_unpacked_bytes() / MiB:,.0f} MiB.",
            field="upload", status_code=413,
        )
    if not any(PurePosixPath(m.name).name.endswith(".safetensors") for m in files):
        raise RuleError(
            Code.NO_WEIGHTS,
            "The archive has no .safetensors weights. Save the model with save_pretrained(..., safe_serialization=True) "
            "and pack the whole folder (config.json, model.safetensors, tokenizer files).",
            field="upload",
        )


def kept_files(members: list[Member]) -> list[Member]:
    """The archive's files the model uses to run (``tasks.model_checks.is_model_file``); the rest is dropped."""
    return [m for m in members if m.type == "file" and is_model_file(m.name)]


def kept_bytes(members: list[Member]) -> int:
    """Unpacked bytes of the files an archive keeps (``kept_files``)."""
    return sum(m.size for m in kept_files(members))


def storage_quota_bytes() -> int:
    return int(_setting("MODEL_STORAGE_QUOTA_BYTES", 10 * 1024**3))


def storage_used_bytes(user) -> int:
    """Unpacked bytes the user's models keep: every file of their uploaded model folders and
    predictions files under ``MEDIA_ROOT/models/`` (models that failed included, until deleted),
    plus the declared bytes of the kept files of their archives still waiting to be unpacked
    (status ``unpacking``: ``MLModel.archive_kept_bytes``), so queued uploads count at once."""
    root, used = models_root().resolve(), 0
    for path in MLModel.objects.filter(owner=user).exclude(path="").values_list("path", flat=True):
        local = Path(path)
        if not local.exists() or not local.resolve().is_relative_to(root):
            continue
        files = [local] if local.is_file() else [f for f in local.rglob("*") if f.is_file()]
        used += sum(f.stat().st_size for f in files)
    pending = MLModel.objects.filter(owner=user, status=MLModel.Status.UNPACKING).aggregate(total=Sum("archive_kept_bytes"))
    return used + (pending["total"] or 0)


def check_storage_quota(user, adding: int) -> None:
    """Refuse (413, ``storage_quota``) when ``adding`` more unpacked bytes would take ``user`` over
    ``settings.MODEL_STORAGE_QUOTA_BYTES`` (default 10 GiB) counting ``storage_used_bytes``;
    superusers are exempt. Call it under ``_lock_user`` to count concurrent uploads."""
    if getattr(user, "is_superuser", False):
        return
    used, quota = storage_used_bytes(user), storage_quota_bytes()
    if used + adding > quota:
        raise RuleError(
            Code.STORAGE_QUOTA,
            f"This model's files unpack to {adding / MiB:,.1f} MiB and your models already keep (or are unpacking) "
            f"{used / MiB:,.1f} MiB; your storage quota is {quota / MiB:,.0f} MiB. Delete a model you no longer need, "
            "or leave out files the model does not need to run.",
            field="upload", status_code=413,
        )


def _lock_user(user) -> None:
    """Lock ``user``'s row until the transaction ends, so one user's uploads pass the quota one at a
    time (PostgreSQL; SQLite serialises every writing transaction anyway)."""
    get_user_model().objects.select_for_update(of=("self",)).only("pk").get(pk=user.pk)


def extract_archive(path: Path, members: list[Member], dest: Path, *, only: set[str] | None = None) -> None:
    """Write the checked ``members`` of the archive at ``path`` under ``dest``, never beyond declared sizes;
    with ``only``, just the files so named (and the folders holding them): the rest is never read."""
    archive_format, archive = _open_archive(path)
    dest_resolved = dest.resolve()
    with archive:
        entries = archive.infolist() if archive_format == "zip" else archive.getmembers()
        for entry, member in zip(entries, members):
            if only is not None and member.name not in only:
                continue
            target = (dest / member.name) if member.name else dest
            if not target.resolve().is_relative_to(dest_resolved):  # defence in depth after _safe_name
                raise RuleError(Code.UNSAFE_PATH, f"The archive entry '{member.name}' points outside the archive.", field="upload")
            if member.type == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            try:
                source = archive.open(entry) if archive_format == "zip" else archive.extractfile(entry)
                with source, open(target, "xb") as out:
                    while chunk := source.read(MiB):
                        written += len(chunk)
                        if written > member.size:
                            raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive entry '{member.name}' is larger than it declares.", field="upload")
                        out.write(chunk)
            except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, NotImplementedError) as error:
                # A bad CRC, a truncated stream or an unsupported compression surfaces only while reading.
                raise RuleError(
                    Code.NOT_AN_ARCHIVE,
                    f"The archive entry '{member.name}' is damaged and cannot be read ({error}). Pack the model folder again.",
                    field="upload",
                ) from None


def model_folder(staging: Path) -> Path:
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


def is_weights(member: Member) -> bool:
    """True for a weights file (``*.safetensors``): unpacked by the job, never read in the request."""
    return PurePosixPath(member.name).name.endswith(".safetensors")


def write_skeleton(path: Path, members: list[Member], kept: list[Member], dest: Path) -> Path:
    """Write the archive's kept files other than weights under ``dest`` (config, tokenizer: at most
    ``max_small_files_bytes()`` in all) and an empty placeholder for each weights file; return the
    model folder in it (``model_folder``). ``check_model_directory`` reads only file names and the
    JSON configs, so it judges the skeleton as it would the unpacked model. Raises ``RuleError``
    (``archive_too_big``, 413, when the small files are too large; a damaged small file; ``bad_config``)."""
    small = [m for m in kept if not is_weights(m)]
    total = sum(m.size for m in small)
    if total > max_small_files_bytes():
        largest = sorted(small, key=lambda m: m.size, reverse=True)[:3]
        raise RuleError(
            Code.ARCHIVE_TOO_BIG,
            f"The archive's configuration and tokenizer files take {total / MiB:,.1f} MiB "
            f"(largest: {', '.join(f'{m.name} {m.size / MiB:,.1f} MiB' for m in largest)}); at most "
            f"{max_small_files_bytes() / MiB:,.0f} MiB are accepted besides the .safetensors weights. "
            "Ship the files written by save_pretrained() only.",
            field="upload", status_code=413,
        )
    extract_archive(path, members, dest, only={m.name for m in small})
    for member in kept:
        if is_weights(member):
            placeholder = dest / member.name
            placeholder.parent.mkdir(parents=True, exist_ok=True)
            placeholder.touch()
    return model_folder(dest)


class _StagedFile(File):
    """A staged local file handed to the storage: the file-system storage moves it into place
    (``temporary_file_path``) instead of copying it; other storages stream it."""

    def __init__(self, path: Path):
        super().__init__(open(path, "rb"), name=path.name)
        self._path = path

    def temporary_file_path(self) -> str:
        return str(self._path)


def store_archive(path: Path, archive_format: str) -> str:
    """Put the staged archive at ``path`` into the storage (``tasks.artefacts.storage()``) under
    ``uploads/<random hex>.<zip|tar>``, where any worker reads it; return its storage name. The
    staged file may be moved away."""
    name = f"uploads/{uuid.uuid4().hex}.{archive_format}"
    with _StagedFile(path) as staged:
        stored = artefacts.storage().save(name, staged)
    if stored != name:
        artefacts.storage().delete(stored)
        raise RuntimeError(f"The storage stored {name} as {stored}; upload names must be kept.")
    return stored


def submit_model_archive(
    *, user, task: Task, upload, name: str, description: str = "", anonymous: bool = False, published: bool = True,
    rate_limited: bool = True,
) -> MLModel:
    """Check a model archive of ``task`` for ``user``, store it and queue the job that unpacks it.

    The request checks everything that needs no weights, so a bad archive is refused at once:
    the upload's size (``MODEL_ARCHIVE_MAX_BYTES``), its members (``list_archive``,
    ``check_members``: paths, links, special files, pickles, code, weights present, unpacked
    size), its small kept files (config, tokenizer: ``write_skeleton``, then
    ``check_model_directory``: architecture, labels, tokenizer) and the owner's storage quota
    (``check_storage_quota``: the unpacked bytes of the kept files, ``kept_files``, counted with
    the owner's stored models and archives still unpacking). The quota is checked again and the
    model created under a lock on the owner's row, so two concurrent uploads cannot both pass.

    Returns the new ``MLModel`` (kind ``hf_directory``, status ``unpacking``, no ``path`` yet)
    whose archive is in the storage (``MLModel.archive``); the job
    ``leaderboard.jobs.unpack_model`` is enqueued when the transaction commits. It writes the
    kept files only to ``MEDIA_ROOT/models/<id>/``, publishes the artefact, sets the status
    ``queued`` and schedules the evaluation, or sets ``failed`` with the reason (e.g. a damaged
    weights file).

    Raises ``RateLimited`` (daily limit), ``RuleError`` with codes ``archive_too_big``,
    ``not_an_archive``, ``unsafe_path``, ``link_in_archive``, ``special_file_in_archive``,
    ``pickle_weights``, ``no_weights``, ``bad_config``, ``storage_quota`` (413) or the registry's ``model_*`` codes
    (architecture, labels, tokenizer). Nothing is stored when it raises.
    """
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited)
    root = models_root()
    archive_path = _stage_upload(upload, max_bytes=max_archive_bytes(), what="archive", directory=root)
    skeleton = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    stored = None
    try:
        members = list_archive(archive_path)
        check_members(members)
        kept = kept_files(members)
        adding = sum(m.size for m in kept)
        check_storage_quota(user, adding)  # before storing anything; again under the lock below
        check_model_directory(write_skeleton(archive_path, members, kept, skeleton), task=task)
        stored = store_archive(archive_path, archive_kind(archive_path))
        with transaction.atomic():
            _lock_user(user)
            check_storage_quota(user, adding)
            model = MLModel.objects.create(
                task=task, owner=user, name=name, description=description or "", kind=MLModel.Kind.HF_DIRECTORY,
                published=published, anonymous=anonymous, status=MLModel.Status.UNPACKING, archive=stored,
                archive_kept_bytes=adding,
            )
            model_id = model.pk
            transaction.on_commit(lambda: enqueue_unpack(model_id))
        return model
    except BaseException:
        if stored is not None:
            artefacts.storage().delete(stored)
        raise
    finally:
        archive_path.unlink(missing_ok=True)
        shutil.rmtree(skeleton, ignore_errors=True)


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
    if "model" not in task.spec.submissions:
        raise RuleError(Code.WRONG_SUBMISSION, f"The task '{task.code}' takes no model directories.", field="path")
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
        artefacts.publish(model)
        _enqueue_evaluation(model.pk)
    return model


# --- prediction files --------------------------------------------------------------------


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
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited, submission="predictions")
    datasets = scoring_items(task)
    if not datasets:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' has no scoring datasets yet, so predictions cannot be scored.")
    root = models_root()
    staged = _stage_upload(upload, max_bytes=max_predictions_bytes(), what="predictions file", directory=root)
    final_dir = None
    try:
        with open(staged, "rb") as fh:
            predictions = parse_predictions(task, fh, datasets=datasets)
        field = task.spec.prediction_field
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
            artefacts.publish(model)
            _enqueue_evaluation(model.pk)
        return model
    except BaseException:
        if final_dir is not None:
            shutil.rmtree(final_dir, ignore_errors=True)
        raise
    finally:
        staged.unlink(missing_ok=True)


# --- data-centric selections ----------------------------------------------------------------


def submit_selection(
    *, user, task: Task, uids, name: str, description: str = "", anonymous: bool = False, published: bool = True,
    rate_limited: bool = True,
) -> MLModel:
    """Submit a training-set selection to a data-centric task; queue its training, then its evaluation.

    ``uids``: the chosen uids of the task's candidate pool (``task.spec.training_pool``), at
    most the task's budget (``task.spec.check_selection``). ``name`` becomes the trained
    model's directory, so it is a slug unique in the task. Returns a new ``MLModel`` (status
    ``training``) whose ``training_info["selection"]`` holds the uids; the RQ job
    ``leaderboard.jobs.train_selection`` trains the task's fixed recipe on exactly them with
    its fixed seed (``tasks.training.train_selection``) and queues the evaluation on the
    scoring datasets, so the leaderboard ranks the selections.

    Raises ``RateLimited`` (daily limit) and ``RuleError``: ``wrong_submission`` (the task
    takes no selections), ``no_pool`` (its pool dataset is missing), ``bad_selection`` naming
    the first offender (not a list, over the budget, a repeated uid, a uid not in the pool),
    ``bad_model_name`` / ``model_name_taken``. Nothing is stored when it raises.
    """
    from tasks.training import check_model_name, model_directory

    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited, submission="selection")
    name = check_model_name(task, name)
    pool_name = task.spec.training_pool(task.config)
    pool = Dataset.objects.filter(task=task, name=pool_name).first()
    if pool is None:
        raise RuleError(Code.NO_POOL, f"The task '{task.code}' has no pool dataset '{pool_name}' yet; ask its owner.")
    pool_uids = set(DatasetItem.objects.filter(dataset=pool).values_list("uid", flat=True))
    uids = task.spec.check_selection(task.config, uids, pool_uids)
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=user, name=name, description=description or f"Selection of {len(uids)} items of {pool_name}.",
            kind=MLModel.Kind.HF_DIRECTORY, path=str(model_directory(task, name)), published=published,
            anonymous=anonymous, status=MLModel.Status.TRAINING, training_info={"selection": uids},
        )
        model_id = model.pk
        transaction.on_commit(lambda: enqueue_selection_training(model_id))
    return model


# --- the owner's actions -----------------------------------------------------------------


def set_model_visibility(*, actor, model: MLModel, published: bool | None = None, anonymous: bool | None = None) -> MLModel:
    """Publish/unpublish or anonymise/de-anonymise ``model`` (its owner, or an admin).

    Raises ``NotAllowed`` for anyone else. The task's leaderboard is recomputed on commit.
    """
    if not access.owns_model(actor, model):
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
            task_id = model.task_id
            if model.published:
                schedule_evaluations(model.task, models=[model])
            transaction.on_commit(lambda: enqueue_recompute(task_id))
    return model


# --- leaderboard configs: forks and frozen snapshots --------------------------------------


def save_leaderboard_config(
    *, user, task: Task, name: str, metric_weights: dict, dataset_weights: dict,
    missing_metric: str = "drop_metric", description: str = "", frozen: bool = False,
):
    """Save a weight set ("fork") of ``task``'s leaderboard, or a frozen snapshot of its ranking.

    Any logged-in user may save one; it is shared by the URL of its ``slug``. A frozen
    snapshot stores the ranked rows as they are now and never changes. ``missing_metric`` is
    stored in its own field (``drop_metric`` or ``exclude_model``). Raises ``NotAllowed`` for
    anonymous users, ``RuleError`` for a missing name, bad weights or an unknown missing-metric
    choice.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to save a leaderboard.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the saved leaderboard a name of 1 to 200 characters.", field="name")
    table = leaderboard_table(task, metric_weights=metric_weights, dataset_weights=dataset_weights, missing_metric=missing_metric)
    config = LeaderboardConfig.objects.create(
        task=task, owner=user, name=name, description=description or "",
        metric_weights=dict(table.metric_weights), dataset_weights=table.dataset_weights,
        missing_metric=table.missing_metric, frozen=frozen,
        snapshot=({"rows": table.snapshot(), "datasets": table.datasets, "rules": table.rules,
                   "pending": [p["name"] for p in table.pending],
                   "provenance": snapshot_provenance(task, [r.model_id for r in table.rows])} if frozen else []),
    )
    return config
