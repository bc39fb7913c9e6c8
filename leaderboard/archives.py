"""Model archives (zip, tar, tar.gz): staging an upload, checking its entries, unpacking the kept files.
No database writes here: ``leaderboard/services.py`` (the web request) and ``leaderboard/unpacking.py``
(the job) both call these functions, so the two surfaces apply one set of rules (``MemberRules``).

What the web request may do is bounded by what costs nothing to read: the upload's size
(``stage_upload``), its format (``archive_kind``: a zip's end record, a tar's first header) and, for a
zip, its central directory (``zip_members``: names, kinds and declared sizes, nothing decompressed).
Everything that decompresses (a tar.gz's member list, the files themselves) happens in the job,
``unpack_archive``, member by member: each entry is checked as its header is read, its declared size
added to the archive's before its data is read, and its bytes counted while they are read, so
reading stops at the first byte past ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES`` (or past the owner's
storage quota).

Limits come from settings (``MODEL_ARCHIVE_MAX_BYTES``, ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``); every
refusal is a ``RuleError`` with a code from ``leaderboard/error_codes.py`` and a message that says what
to fix.
"""

from __future__ import annotations

import gzip
import lzma
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
from dynabench.filestore import save_whole
from leaderboard.error_codes import LeaderboardErrorCode as Code
from tasks.loop import artefacts
from tasks.loop.model_checks import CODE_SUFFIXES, PICKLE_SUFFIXES, is_model_file


MiB = 1024 * 1024


MAX_MEMBERS = 10_000


def _setting(name: str, default):
    return getattr(settings, name, default)


def max_archive_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_BYTES", 2048 * MiB))


def max_unpacked_bytes() -> int:
    return int(_setting("MODEL_ARCHIVE_MAX_UNPACKED_BYTES", 4096 * MiB))


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


def _zip_member(info: zipfile.ZipInfo) -> Member:
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
    return Member(name, kind, info.file_size)


def _tar_member(info: tarfile.TarInfo) -> Member:
    name = _safe_name(info.name)
    if info.issym() or info.islnk():
        kind = "link"
    elif info.isdir():
        kind = "dir"
    elif info.isfile():
        kind = "file"
    else:
        kind = "special"
    return Member(name, kind, info.size)


def _open_archive(path: Path):
    """Return ``("zip" | "tar", opened archive)`` (its format, then the archive) or raise ``not_an_archive``.
    Cheap: a zip's end record and central directory, or a tar's first header; nothing else is read."""
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
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise RuleError(not_archive.code, f"{not_archive.message} ({error})", field="upload")
    raise not_archive


def archive_kind(path: Path) -> str:
    """``"zip"`` or ``"tar"``: the format of the archive at ``path`` (``RuleError`` ``not_an_archive`` otherwise).
    Reads a zip's end record or a tar's first header only."""
    found, archive = _open_archive(path)
    archive.close()
    return found


def zip_members(path: Path) -> list[Member]:
    """Return the entries of the zip at ``path`` from its central directory (nothing is decompressed),
    checking every path is relative and inside the archive. Raises ``not_an_archive`` for anything else."""
    archive_format, archive = _open_archive(path)
    with archive:
        if archive_format != "zip":
            raise RuleError(Code.NOT_AN_ARCHIVE, "The upload is not a zip archive.", field="upload")
        return [_zip_member(info) for info in archive.infolist()]


class MemberRules:
    """The rules on an archive's entries, applied one entry at a time in the order they are read
    (``admit``), then to the whole (``finish``): at most ``MAX_MEMBERS`` entries; no links, device or
    pipe entries; each path once; no entry under a path that is a file; no pickle or code files; the
    declared sizes of all files together at most ``max_bytes`` (``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``):
    an entry whose declared size passes it is refused before one byte of it is read; and (``finish``)
    some ``.safetensors`` weights. Each refusal is a ``RuleError`` naming the first entry at fault."""

    def __init__(self, *, max_bytes: int | None = None):
        self.max_bytes = max_unpacked_bytes() if max_bytes is None else max_bytes
        self.entries = 0
        self.declared = 0
        self.paths: set[str] = set()
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.weights = False

    def admit(self, member: Member) -> None:
        """Check one more entry (its header only: name, kind, declared size); raise ``RuleError`` if refused."""
        self.entries += 1
        if self.entries > MAX_MEMBERS:
            raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive has more than {MAX_MEMBERS:,} entries; at most {MAX_MEMBERS:,} are accepted.", field="upload")
        if member.type == "link":
            raise RuleError(
                Code.LINK_IN_ARCHIVE,
                f"The archive contains links ({member.name}); links are refused. Replace them with the files themselves "
                "(`zip -r` without `--symlinks`, or `tar --dereference`).",
                field="upload",
            )
        if member.type == "special":
            raise RuleError(Code.SPECIAL_FILE_IN_ARCHIVE, f"The archive contains device or pipe entries ({member.name}); only regular files and folders are accepted.", field="upload")
        parents = [str(parent) for parent in PurePosixPath(member.name).parents if str(parent) != "."]
        if member.type != "dir":
            if member.name in self.paths:
                raise RuleError(
                    Code.UNSAFE_PATH,
                    f"The archive holds the same path more than once ({member.name}); each file may appear once. Pack the "
                    "model folder again.",
                    field="upload",
                )
            self.paths.add(member.name)
        if any(parent in self.files for parent in parents) or (member.type == "file" and member.name in self.folders):
            raise RuleError(
                Code.UNSAFE_PATH,
                f"The archive puts entries inside a path that is a file ({member.name}); a path cannot be both a file "
                "and a folder. Pack the model folder again.",
                field="upload",
            )
        self.folders.update(parents)
        if member.type != "file":
            return
        self.files.add(member.name)
        lower = member.name.lower()
        if lower.endswith(PICKLE_SUFFIXES):
            raise RuleError(
                Code.PICKLE_WEIGHTS,
                f"Pickle-based files are never loaded: remove {member.name} and ship the weights as model.safetensors "
                "(save_pretrained(..., safe_serialization=True)).",
                field="upload",
            )
        if lower.endswith(CODE_SUFFIXES):
            raise RuleError(Code.PICKLE_WEIGHTS, f"Code files are never run: remove {member.name}; use an architecture built into transformers.", field="upload")
        self.declared += member.size
        if self.declared > self.max_bytes:
            raise RuleError(
                Code.ARCHIVE_TOO_BIG,
                f"The archive unpacks to more than {self.max_bytes / MiB:,.0f} MiB, the limit: its entries up to "
                f"'{member.name}' ({member.size / MiB:,.1f} MiB) declare {self.declared / MiB:,.1f} MiB. Leave out "
                "optimizer states, checkpoints and anything the model does not need to run.",
                field="upload", status_code=413,
            )
        self.weights = self.weights or is_weights(member)

    def finish(self) -> None:
        """After the last entry: refuse an archive without ``.safetensors`` weights (``no_weights``)."""
        if not self.weights:
            raise RuleError(
                Code.NO_WEIGHTS,
                "The archive has no .safetensors weights. Save the model with save_pretrained(..., safe_serialization=True) "
                "and pack the whole folder (config.json, model.safetensors, tokenizer files).",
                field="upload",
            )


def check_members(members: list[Member], *, max_bytes: int | None = None) -> None:
    """Apply ``MemberRules`` to a whole list of entries (e.g. a zip's central directory, ``zip_members``)."""
    rules = MemberRules(max_bytes=max_bytes)
    for member in members:
        rules.admit(member)
    rules.finish()


def kept_files(members: list[Member]) -> list[Member]:
    """The archive's files the model uses to run (``tasks.loop.model_checks.is_model_file``); the rest is dropped."""
    return [m for m in members if m.type == "file" and is_model_file(m.name)]


def kept_bytes(members: list[Member]) -> int:
    """Unpacked bytes of the files an archive keeps (``kept_files``)."""
    return sum(m.size for m in kept_files(members))


class _Reading:
    """Bytes read from an archive's entries so far, against the unpacked-size limit and the quota."""

    def __init__(self, *, max_bytes: int, quota_left: int | None):
        self.max_bytes, self.quota_left = max_bytes, quota_left
        self.read = 0
        self.kept = 0

    def count(self, member: Member, chunk: bytes, written: int) -> None:
        self.read += len(chunk)
        self.kept += len(chunk)
        if written > member.size:
            raise RuleError(Code.ARCHIVE_TOO_BIG, f"The archive entry '{member.name}' is larger than it declares.", field="upload")
        if self.read > self.max_bytes:
            raise RuleError(
                Code.ARCHIVE_TOO_BIG,
                f"The archive unpacks to more than {self.max_bytes / MiB:,.0f} MiB, the limit (reading stopped in "
                f"'{member.name}').",
                field="upload", status_code=413,
            )
        if self.quota_left is not None and self.kept > self.quota_left:
            raise RuleError(
                Code.STORAGE_QUOTA,
                f"This model's files unpack to more than the {max(self.quota_left, 0) / MiB:,.1f} MiB left of your "
                f"storage quota (reading stopped in '{member.name}'). Delete a model you no longer need, or leave out "
                "files the model does not need to run.",
                field="upload", status_code=413,
            )


def _write_member(source, member: Member, dest: Path, dest_resolved: Path, reading: _Reading) -> None:
    target = dest / member.name
    if not target.resolve().is_relative_to(dest_resolved):  # defence in depth after _safe_name
        raise RuleError(Code.UNSAFE_PATH, f"The archive entry '{member.name}' points outside the archive.", field="upload")
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with source, open(target, "xb") as out:
        while chunk := source.read(MiB):
            written += len(chunk)
            reading.count(member, chunk, written)
            out.write(chunk)


def unpack_archive(path: Path, dest: Path, *, max_bytes: int | None = None, quota_left: int | None = None) -> int:
    """Read the archive at ``path`` entry by entry and write the files a model keeps (``kept_files``)
    under ``dest``; return their bytes. The other files are never written (a tar's are read past).

    Each entry's header goes through ``MemberRules`` before its data is read (so an entry declaring
    more than ``max_bytes``, default ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``, is refused unread); its
    bytes are then counted as they are read and reading stops at the first byte past its declared
    size, past ``max_bytes`` in all, or past ``quota_left`` bytes kept (None: no quota). A tar is read
    as a stream (``r|*``): one pass, no member list built first. Raises ``RuleError`` (the rules'
    codes, ``archive_too_big``/``storage_quota`` 413, ``not_an_archive`` for a damaged archive); what
    was written under ``dest`` stays for the caller to remove.
    """
    limit = max_unpacked_bytes() if max_bytes is None else max_bytes
    rules = MemberRules(max_bytes=limit)
    reading = _Reading(max_bytes=limit, quota_left=quota_left)
    dest_resolved = dest.resolve()
    archive_format = archive_kind(path)
    current = ""
    try:
        if archive_format == "zip":
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    member = _zip_member(info)
                    current = member.name
                    rules.admit(member)
                    if member.type == "file" and is_model_file(member.name):
                        _write_member(archive.open(info), member, dest, dest_resolved, reading)
        else:
            with tarfile.open(path, "r|*") as archive:
                for info in archive:
                    member = _tar_member(info)
                    current = member.name
                    rules.admit(member)
                    if member.type == "file" and is_model_file(member.name):
                        _write_member(archive.extractfile(info), member, dest, dest_resolved, reading)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, NotImplementedError) as error:
        # A bad CRC, a truncated stream or an unsupported compression surfaces only while reading.
        where = f"entry '{current}'" if current else "archive"
        raise RuleError(
            Code.NOT_AN_ARCHIVE,
            f"The archive {where} is damaged and cannot be read ({error}). Pack the model folder again.",
            field="upload",
        ) from None
    rules.finish()
    return reading.kept


def model_folder(staging: Path) -> Path:
    """The folder holding config.json: the staging folder, or its single top-level folder."""
    if (staging / "config.json").is_file():
        return staging
    children = [c for c in staging.iterdir() if not c.name.startswith("__MACOSX")] if staging.is_dir() else []
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


class _StagedFile(File):
    """A staged local file handed to the storage: the file-system storage moves it into place
    (``temporary_file_path``) instead of copying it; other storages stream it."""

    def __init__(self, path: Path):
        super().__init__(open(path, "rb"), name=path.name)
        self._path = path

    def temporary_file_path(self) -> str:
        return str(self._path)


def store_archive(path: Path, archive_format: str) -> str:
    """Put the staged archive at ``path`` into the storage (``tasks.loop.artefacts.storage()``) under
    ``uploads/<random hex>.<zip|tar>``, where any worker reads it; return its storage name. The
    staged file may be moved away."""
    name = f"uploads/{uuid.uuid4().hex}.{archive_format}"
    with _StagedFile(path) as staged:
        stored = save_whole(artefacts.storage(), name, staged)  # a failed write (a full disk) leaves nothing
    if stored != name:
        artefacts.storage().delete(stored)
        raise RuntimeError(f"The storage stored {name} as {stored}; upload names must be kept.")
    return stored
