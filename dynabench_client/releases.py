"""Dataset releases in the client: list a task's releases, and download one, streamed and resumable
(HTTP ``Range``), every file checked against the sha256 the release's manifest gives."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from dynabench_client.errors import DynabenchError

#: ``progress(name, done, total)``: bytes of file ``name`` received so far, of ``total``.
FileProgress = Callable[[str, int, int], None]
BLOCK = 1 << 20


class ChecksumMismatch(DynabenchError):
    """A downloaded file's sha256 differs from the manifest's (the partial file is removed)."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


class ReleasesMixin:
    """``releases``, ``release`` and ``download_release`` for ``DynabenchClient``."""

    def releases(self, task: str) -> list[dict]:
        """A task's published releases, newest first (``GET /api/v1/tasks/{task}/releases``)."""
        return list(self._pages(f"/tasks/{task}/releases"))

    def release(self, task: str, version: str) -> dict:
        """One release with its files (name, format, size, sha256, rows, round, split, url) and changelog."""
        return self._request("GET", f"/tasks/{task}/releases/{version}")

    def download_release(self, task: str, version: str, dest: str | Path | None = None, *,
                         progress: FileProgress | None = None) -> Path:
        """Download release ``version`` of ``task`` into the folder ``dest`` (default ``<task>-<version>``)
        and return the folder. Each file is streamed to ``<name>.part`` and resumed from its size with
        an HTTP ``Range`` request when the download was interrupted; a file already there with the
        right sha256 is kept. Every file is checked against the manifest's sha256 (``ChecksumMismatch``
        otherwise); ``manifest.json`` (the API's answer) is written beside the files. Then
        ``datasets.load_dataset("<folder>")`` reads the card's configs."""
        meta = self.release(task, version)
        folder = Path(dest or f"{task}-{version}")
        for entry in meta["files"]:
            target = folder / entry["name"]
            if target.is_file() and _sha256(target) == entry["sha256"]:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".part")
            self._fetch(entry, partial, progress)
            if _sha256(partial) != entry["sha256"]:
                partial.unlink()
                raise ChecksumMismatch(0, "checksum_mismatch", f"{entry['name']}: sha256 differs from the release's manifest")
            partial.replace(target)
        (folder / "manifest.json").write_text(json.dumps(meta, indent=2))
        return folder

    def _fetch(self, entry: dict, partial: Path, progress: FileProgress | None) -> None:
        """Stream ``entry["url"]`` into ``partial``, resuming from its size."""
        offset = partial.stat().st_size if partial.is_file() else 0
        if offset >= entry["size"]:
            partial.unlink()
            offset = 0
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        with self.session.get(entry["url"], headers=headers, stream=True, timeout=self.timeout) as response:
            if response.status_code >= 400:
                raise self._error(response)
            if response.status_code == 200:  # the server sent the whole file
                offset = 0
            with open(partial, "ab" if offset else "wb") as handle:
                done = offset
                for block in response.iter_content(BLOCK):
                    handle.write(block)
                    done += len(block)
                    if progress:
                        progress(entry["name"], done, entry["size"])
