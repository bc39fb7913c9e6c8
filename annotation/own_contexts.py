"""What an annotator's own context shares, whatever it holds (an image: ``annotation.image_uploads``;
a clip: ``annotation.audio_uploads``): who may add one, the round it goes to, how the upload is
read and refused, and the context it becomes: one of the task's current open round, tagged ``annotator-upload``
so the owner can find, review or deactivate these."""

from __future__ import annotations

import posixpath

from dynabench.errors import FieldErrors, NotAllowed, RuleError
from tasks.access import has_task_role, is_banned
from tasks.models import Context, Round, Task

UPLOAD_TAG = "annotator-upload"


def upload_round(*, user, task: Task, takes: bool, kind: str, what: str) -> Round:
    """Return the open round that ``user``'s own upload goes to: of ``kind`` (``"image"``,
    ``"audio"``), named ``what`` in messages (``"images"``, ``"clips"``).

    ``takes``: whether the task's config takes such uploads from annotators. Raises ``RuleError``
    ``<kind>_uploads_off`` (it does not) or ``no_open_round``, and ``NotAllowed`` ``not_annotator``
    (not an annotator of the task, or banned from it).
    """
    if not takes:
        raise RuleError(f"{kind}_uploads_off", f"{task.name} does not take {what} from annotators.")
    if not has_task_role(user, task, "annotator") or is_banned(user, task):
        raise NotAllowed("not_annotator", f"Only annotators of {task.name} may add {what} to it.")
    round_ = task.current_round()
    if round_ is None or round_.status != Round.Status.OPEN:
        raise RuleError("no_open_round", f"{task.name} has no open round.")
    return round_


def checked_upload(file, *, max_bytes: int, check, refused: type[Exception], code: str, field: str, missing: str):
    """Return ``check(data, name)`` of the uploaded ``file`` (its bytes, at most ``max_bytes + 1`` read so
    that a file over the limit is seen as one; its base name, for messages).

    Raises ``FieldErrors`` ``code`` naming ``field``: ``missing`` when there is no file, else the
    reason ``check`` gave by raising ``refused``.
    """
    if file is None:
        raise FieldErrors(code, {field: [missing]})
    name = posixpath.basename(str(file.name).replace("\\", "/"))
    try:
        return check(file.read(max_bytes + 1), name)
    except refused as error:
        raise FieldErrors(code, {field: [str(error)]}) from None


def own_context(*, round_: Round, field: str, sha256: str) -> Context:
    """The context of ``round_`` whose ``field`` holds the stored file ``sha256`` (created when new,
    tagged ``UPLOAD_TAG``; the same file twice is one context)."""
    context, _ = Context.objects.get_or_create(round=round_, uid=sha256, defaults={"data": {field: sha256}, "tag": UPLOAD_TAG})
    return context
