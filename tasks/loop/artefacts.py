"""Model artefacts through Django's storage API, and each worker's local cache of them.

A model's artefact (a Hugging Face directory, or a predictions file) is published to the
default storage (``settings.STORAGES["default"]``: the local file system under ``MEDIA_ROOT``
by default, an S3-compatible bucket with django-storages in production) under its checksum::

    artefacts/<checksum>/MANIFEST.json        {"kind": "directory"|"file", "files": [{"name", "size", "sha256"}]}
    artefacts/<checksum>/<relative file name> one object per file

The manifest is written last, so an artefact is visible only once every file is stored. Any
process (a worker on another machine included) reads it back with :func:`local_path`, which
copies the files into ``settings.ARTEFACT_CACHE_DIR/<checksum>/`` once, checking each file's
sha256, and renames the folder into place atomically; later calls reuse the cached copy.
Records whose artefact is not (yet) in the storage fall back to their local ``MLModel.path``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import storages

from dynabench.errors import RuleError
from dynabench.filestore import AllOrNothing
from tasks.loop.model_checks import ModelCheckCode

MANIFEST = "MANIFEST.json"
CHUNK = 1 << 20


def storage():
    """The default storage (``settings.STORAGES["default"]``) shared by every process."""
    return storages["default"]


def prefix(checksum: str) -> str:
    """The storage folder of the artefact with this checksum: ``artefacts/<checksum>``."""
    return f"artefacts/{checksum}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _local(model) -> Path:
    path = Path(model.path or "")
    return path if path.is_absolute() else Path(settings.MODELS_DIR) / path


def is_published(checksum: str) -> bool:
    """True when the artefact with ``checksum`` is complete in the storage (its manifest exists)."""
    return bool(checksum) and storage().exists(f"{prefix(checksum)}/{MANIFEST}")


def publish(model) -> bool:
    """Copy the model's local artefact (``MLModel.path``, a folder or a file) into the storage under its
    checksum; return True when it is there afterwards. Idempotent; a record without a checksum or a
    local artefact is left alone (False). Files already stored under the same name are kept
    (content-addressed: same checksum, same bytes). When it fails (a full disk), the files it stored
    are removed again.
    """
    checksum = model.checksum or ""
    if not checksum or not model.path:
        return False
    if is_published(checksum):
        return True
    local = _local(model)
    if local.is_dir():
        kind, files = "directory", sorted(p for p in local.rglob("*") if p.is_file())
        names = [str(p.relative_to(local)) for p in files]
    elif local.is_file():
        kind, files, names = "file", [local], [local.name]
    else:
        return False
    target, entries = storage(), []
    # A publication that fails (a full disk) removes the files it stored: no manifest, no files.
    with AllOrNothing(target) as stored_files:
        for path, name in zip(files, names):
            key = f"{prefix(checksum)}/{name}"
            if target.exists(key):
                target.delete(key)
            with open(path, "rb") as fh:
                stored = stored_files.save(key, File(fh, name=name))
            if stored != key:
                raise RuntimeError(f"The storage stored {key} as {stored}; artefact names must be kept.")
            entries.append({"name": name, "size": path.stat().st_size, "sha256": _sha256(path)})
        body = json.dumps({"kind": kind, "checksum": checksum, "files": entries}, indent=1).encode()
        stored_files.save(f"{prefix(checksum)}/{MANIFEST}", ContentFile(body))
    return True


def cache_root() -> Path:
    return Path(settings.ARTEFACT_CACHE_DIR)


def _fetch(checksum: str) -> Path:
    """Copy the stored artefact into this worker's cache (once) and return the cached folder."""
    root = cache_root()
    cached = root / checksum
    if (cached / MANIFEST).is_file():
        return cached
    source = storage()
    with source.open(f"{prefix(checksum)}/{MANIFEST}", "rb") as fh:
        manifest = json.loads(fh.read().decode())
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{checksum[:12]}-", dir=root))
    try:
        for entry in manifest["files"]:
            name = entry["name"]
            destination = (staging / name).resolve()
            if not destination.is_relative_to(staging.resolve()):
                raise RuleError(ModelCheckCode.NOT_A_DIRECTORY, f"The stored artefact {checksum} names a file outside it: {name}.")
            destination.parent.mkdir(parents=True, exist_ok=True)
            with source.open(f"{prefix(checksum)}/{name}", "rb") as src, open(destination, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
            if _sha256(destination) != entry["sha256"]:
                raise RuleError(
                    ModelCheckCode.NOT_A_DIRECTORY,
                    f"The stored artefact {checksum} is damaged: {name} does not match its sha256.",
                )
        (staging / MANIFEST).write_text(json.dumps(manifest))
        try:
            os.rename(staging, cached)
        except OSError:  # another process of this machine cached it first
            if not (cached / MANIFEST).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cached


def local_path(model) -> Path:
    """A local path of the model's artefact, shaped like ``MLModel.path`` (a folder, or a file).

    From the storage through this process's cache when the artefact is published there; else
    the record's own local path. Raises ``RuleError`` when the stored copy is damaged.
    """
    checksum = model.checksum or ""
    if not is_published(checksum):
        return _local(model)
    cached = _fetch(checksum)
    manifest = json.loads((cached / MANIFEST).read_text())
    if manifest["kind"] == "file":
        return cached / manifest["files"][0]["name"]
    return cached


def unpublish(checksum: str) -> None:
    """Delete the stored artefact with ``checksum`` (manifest first, so readers never see half of it)."""
    if not checksum:
        return
    target = storage()
    name = f"{prefix(checksum)}/{MANIFEST}"
    if not target.exists(name):
        return
    with target.open(name, "rb") as fh:
        manifest = json.loads(fh.read().decode())
    target.delete(name)
    for entry in manifest["files"]:
        target.delete(f"{prefix(checksum)}/{entry['name']}")
