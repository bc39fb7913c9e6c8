"""Where stored context images live, without the ORM: their names in the default storage and
reading one back by its sha256 (``images/<sha256>.<ext>``, content-addressed).

The task kinds (``tasks/kinds/``) read images through this module, since ``tasks.data.images``
builds on the models, which build on the kinds.
"""

from __future__ import annotations

import re

from django.core.files.storage import default_storage

CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
"""Stored file extension → content type."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def stored_name(sha256: str, ext: str) -> str:
    """The storage name of an image: ``images/<sha256>.<ext>``."""
    return f"images/{sha256}.{ext}"


def thumbnail_name(sha256: str) -> str:
    """The storage name of an image's thumbnail: ``images/thumbs/<sha256>.jpg``."""
    return f"images/thumbs/{sha256}.jpg"


def read_stored(sha256: str) -> tuple[bytes, str]:
    """Return ``(bytes, content type)`` of the stored image with this sha256 (64 lower-case hex
    digits). Raises ``FileNotFoundError`` when the value is not such a hash or no image of it is
    stored."""
    if not _SHA256.fullmatch(sha256):
        raise FileNotFoundError(f"not an image hash: {sha256[:64]!r}")
    store = default_storage
    for ext, content_type in CONTENT_TYPES.items():
        name = stored_name(sha256, ext)
        if store.exists(name):
            with store.open(name, "rb") as fh:
                return fh.read(), content_type
    raise FileNotFoundError(f"no stored image {sha256}")
