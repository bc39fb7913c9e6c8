"""Model archives (zip, tar, tar.gz): staging an upload, listing and checking its members,
extracting the kept files. No database writes here: ``leaderboard/services.py`` (the web
request: checks and stores an archive) and ``leaderboard/unpacking.py`` (the job: unpacks it)
both call these functions, so the two surfaces apply one set of rules.

Limits come from settings (``MODEL_ARCHIVE_MAX_BYTES``, ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``,
``MODEL_ARCHIVE_MAX_SMALL_FILES_BYTES``); every refusal is a ``RuleError`` with a code from
``leaderboard/error_codes.py`` and a message that says what to fix.
"""

from __future__ import annotations

import os
import stat
import tarfile
import tempfile
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files import File

from dynabench.errors import RuleError
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.predictions import MAX_LISTED
from tasks import artefacts
from tasks.model_checks import CODE_SUFFIXES, PICKLE_SUFFIXES, is_model_file


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


def models_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "models"


@dataclass(frozen=True)
class Member:
    """One archive entry: its normalised relative path, type (file, dir, link, special) and size."""

    name: str
    type: str
    size: int


def stage_upload(upload, *, max_bytes: int, what: str, directory: Path) -> Path:
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
