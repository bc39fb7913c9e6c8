"""Files written through Django's storage all or nothing: a write that fails leaves nothing behind.

Django's ``FileSystemStorage`` writes a file where it will stay, chunk by chunk, and leaves what it
wrote when a chunk fails (a full disk: ``OSError`` ``ENOSPC``), so a failed upload would leave a
truncated file under the very name a later upload checks for (images, audio clips and artefacts are
stored under their content's hash, and an existing name is not written again). ``save_whole`` removes
what a failed save left; ``AllOrNothing`` does that and, when the operation it guards fails after
some of its files were saved, removes those too, so that a refused upload keeps none of its files.
The error itself goes on up: a full disk answers 507 (``dynabench/outages.py``).
"""

from __future__ import annotations

import errno

#: ``OSError`` numbers that mean the storage has no room left: the disk is full, or the user's quota is.
STORAGE_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_storage_full(error: BaseException) -> bool:
    """Whether ``error`` is an ``OSError`` saying the disk (or the disk quota) is full."""
    return isinstance(error, OSError) and error.errno in STORAGE_FULL_ERRNOS


def _remove(storage, name: str) -> None:
    try:
        if storage.exists(name):
            storage.delete(name)
    except OSError:
        pass  # the original error matters more; a file that cannot be removed now stays unreferenced


def save_whole(storage, name: str, content) -> str:
    """``storage.save(name, content)``; return the name it stored. When the save fails, whatever it
    wrote under ``name`` is removed before the error goes on up."""
    try:
        return storage.save(name, content)
    except BaseException:
        _remove(storage, name)
        raise


class AllOrNothing:
    """The files one operation saves, removed together when the operation fails.

    ::

        with AllOrNothing(default_storage) as files:
            files.save(name, ContentFile(data))   # as storage.save, through save_whole
            ...                                   # an error here removes every file saved above

    ``saved`` lists the names saved so far."""

    def __init__(self, storage):
        self.storage = storage
        self.saved: list[str] = []

    def save(self, name: str, content) -> str:
        """Save ``content`` under ``name`` (``save_whole``) and remember it; return the stored name."""
        stored = save_whole(self.storage, name, content)
        self.saved.append(stored)
        return stored

    def discard(self) -> None:
        """Remove every file saved through it so far."""
        for name in reversed(self.saved):
            _remove(self.storage, name)
        self.saved.clear()

    def __enter__(self) -> AllOrNothing:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is not None:
            self.discard()
