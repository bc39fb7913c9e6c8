"""Helpers of the release tests: build a release inline, and copy a release's public files out of storage."""

from pathlib import Path

from django.core.files.storage import default_storage

from releases.build import build
from releases.models import Release
from releases.services import request_release


def released(task, owner, **kwargs) -> Release:
    """Ask for a release of ``task`` as ``owner`` and build it in this process; return it."""
    return build(request_release(task=task, acting_user=owner, queue=False, **kwargs).pk)


def download_folder(release: Release, folder: Path) -> Path:
    """Copy every public file of ``release`` (its manifest's) from storage into ``folder``; return ``folder``."""
    for entry in release.manifest["files"]:
        target = folder / entry["name"]
        target.parent.mkdir(parents=True, exist_ok=True)
        with default_storage.open(release.storage_prefix + entry["name"], "rb") as handle:
            target.write_bytes(handle.read())
    return folder
