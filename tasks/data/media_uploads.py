"""What an owner's upload of media contexts (images, audio clips) must hold before any file is read,
shared by ``tasks.data.images.ingest_images`` and ``tasks.data.audio.ingest_audio``."""

from __future__ import annotations

from dynabench.errors import FieldErrors, NotAllowed
from tasks.models import Round, Task


def upload_target(*, task: Task, acting_user, files, round_number: int, field_name: str | None, media: str,
                  choose: str) -> tuple[list, Round]:
    """Return ``(the non-empty files, the round)`` an upload of ``media`` (``"images"``, ``"audio"``)
    goes to; ``field_name`` is the task's context field of that type (None when it has none).

    Raises ``NotAllowed`` (``not_task_owner``) for anyone but an owner of ``task``, and
    ``FieldErrors`` (``invalid_upload``) naming ``files`` (none given: ``choose`` says what to
    choose; the task has no such context field, or other context fields too) or ``round`` (no round
    ``round_number``)."""
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may upload {media} to it")
    files = [f for f in (files or []) if f]
    if not files:
        raise FieldErrors("invalid_upload", {"files": [choose]})
    others = [f["name"] for f in task.config.get("context_fields", []) if f["name"] != field_name]
    if field_name is None or others:
        kind = "image" if media == "images" else media
        message = (
            f"Task {task.code} has no context field of type {kind}, or has other context fields too "
            f"({', '.join(others)}); upload a CSV/JSONL of contexts instead."
        )
        raise FieldErrors("invalid_upload", {"files": [message]})
    round_ = Round.objects.filter(task=task, number=round_number).first()
    if round_ is None:
        raise FieldErrors("invalid_upload", {"round": [f"Task {task.code} has no round {round_number}; open it first."]})
    return files, round_
