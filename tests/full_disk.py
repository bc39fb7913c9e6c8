"""A storage on a disk that fills up: for the tests of what an upload does when ``MEDIA_ROOT``'s disk is full.

``FullDiskStorage`` is Django's ``FileSystemStorage`` on a disk with room for ``room_bytes`` bytes,
counting every file under its folder (files written directly there, as a staged upload, included).
A save writes its chunks as the real one does, where the file will stay, and a chunk that does not
fit is written as far as it fits, then the save raises ``OSError(ENOSPC)``, leaving the truncated
file behind exactly as Django's storage leaves it on a real full disk. Removing files makes room
again. The ``full_disk`` fixture (``conftest.py``) makes it the default storage, over ``MEDIA_ROOT``,
and returns it; set ``room_bytes`` to choose how much still fits.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from django.core.files.storage import FileSystemStorage


class FullDiskStorage(FileSystemStorage):
    """``FileSystemStorage`` whose disk holds ``room_bytes`` bytes in all (see the module docstring)."""

    def __init__(self, *, room_bytes: int = 0, **options):
        super().__init__(**options)
        self.room_bytes = room_bytes

    def used_bytes(self) -> int:
        """Bytes of every file under the storage's folder now."""
        root = Path(self.location)
        return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0

    def files(self) -> list[str]:
        """Every file under the storage's folder now, as paths relative to it."""
        root = Path(self.location)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []

    def _save(self, name, content):
        path = Path(self.path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        left = self.room_bytes - self.used_bytes()
        with open(path, "xb") as out:
            for chunk in content.chunks():
                chunk = chunk.encode() if isinstance(chunk, str) else chunk
                if len(chunk) > left:
                    out.write(chunk[: max(left, 0)])
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
                out.write(chunk)
                left -= len(chunk)
        return str(name).replace("\\", "/")
