"""Reading the members of an uploaded zip safely, for uploads of many files (``tasks.data.audio``).

The zip as a whole is refused when a member would land outside its folder (an absolute path,
``..``, a drive letter), is a link, when it holds more than ``max_members`` entries, when a member
unpacks to more than ``max_member_bytes`` or all of them to more than ``max_total_bytes`` (checked
against the sizes the zip declares, and again while reading, since a forged header can understate
them: a zip bomb stops at the limit). Folders and ``__MACOSX``/hidden entries are skipped.
"""

from __future__ import annotations

import io
import zipfile


def zip_members(data: bytes, name: str, *, suffixes: tuple[str, ...], what: str, max_members: int,
                max_member_bytes: int, max_total_bytes: int, refuse) -> list[tuple[str, bytes]]:
    """Return ``[(member path, bytes)]`` of the zip ``data`` (named ``name`` in messages) whose names
    end with one of ``suffixes``; ``what`` names those files in messages (``"audio clip"``). Calls
    ``refuse(message)`` (which must raise) for the cases of the module docstring, for a member of
    another type, and for a zip with none."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        refuse(f"'{name}' is not a readable zip file.")
    if len(infos) > max_members:
        refuse(f"'{name}' holds {len(infos):,} files; the limit is {max_members:,} per zip.")
    members, total, unpacked = [], 0, 0
    for info in infos:
        member = info.filename.replace("\\", "/")
        parts = member.split("/")
        if member.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
            refuse(f"'{name}' has the member '{info.filename}', whose path leads outside the zip's folder; nothing was stored.")
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            refuse(f"'{name}' has the link '{info.filename}'; put the file itself in the zip.")
        if info.is_dir() or any(p.startswith(("__MACOSX", ".")) for p in parts):
            continue
        if not member.lower().endswith(suffixes):
            refuse(f"'{name}' has '{info.filename}', which is not an {what} ({', '.join(suffixes)}).")
        if info.file_size > max_member_bytes:
            refuse(f"'{info.filename}' in '{name}' has {info.file_size:,} bytes unpacked; the limit is {max_member_bytes:,}.")
        total += info.file_size
        if total > max_total_bytes:
            refuse(f"'{name}' unpacks to more than {max_total_bytes:,} bytes; split it.")
        try:
            with archive.open(info) as fh:
                content = fh.read(max_member_bytes + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            refuse(f"'{info.filename}' in '{name}' cannot be unpacked ({error}); zip it again.")
        if len(content) > max_member_bytes:
            refuse(f"'{info.filename}' in '{name}' unpacks to more than {max_member_bytes:,} bytes.")
        unpacked += len(content)
        if unpacked > max_total_bytes:
            refuse(f"'{name}' unpacks to more than {max_total_bytes:,} bytes; split it.")
        members.append((member, content))
    if not members:
        refuse(f"'{name}' holds no {what}s.")
    return members
