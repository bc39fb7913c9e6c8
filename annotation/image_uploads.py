"""An annotator's own image as the context of their next example (tasks whose config sets
``annotator_image_uploads``): checked, cleaned and stored exactly as an owner's upload
(``tasks.data.images``), and added to the task's current open round as a context tagged
``annotator-upload``, so the owner can find, review or deactivate these."""

from __future__ import annotations

import posixpath

from django.conf import settings
from django.db import transaction

from dynabench.errors import FieldErrors, NotAllowed, RuleError
from tasks.access import has_task_role, is_banned
from tasks.data.images import ImageRefused, check_image, image_context_field, store_image
from tasks.models import Context, Round, Task

UPLOAD_TAG = "annotator-upload"


def add_image_context(*, user, task: Task, file) -> Context:
    """Check ``file`` (an uploaded image) and return the context of the task's open round that shows it
    (created when new; the same image twice is one context).

    Raises ``RuleError`` ``image_uploads_off`` (the task does not take annotators' images) or
    ``no_open_round``, ``NotAllowed`` (not an annotator of the task, or banned) and ``FieldErrors``
    ``invalid_image`` naming ``image`` with the reason the image is refused (nothing stored then).
    """
    if not task.config.get("annotator_image_uploads") or image_context_field(task.config) is None:
        raise RuleError("image_uploads_off", f"{task.name} does not take images from annotators.")
    if not has_task_role(user, task, "annotator") or is_banned(user, task):
        raise NotAllowed("not_annotator", f"Only annotators of {task.name} may add images to it.")
    round_ = task.current_round()
    if round_ is None or round_.status != Round.Status.OPEN:
        raise RuleError("no_open_round", f"{task.name} has no open round.")
    if file is None:
        raise FieldErrors("invalid_image", {"image": ["Choose an image (PNG, JPEG, WebP or GIF)."]})
    name = posixpath.basename(str(file.name).replace("\\", "/"))
    try:
        image = check_image(file.read(settings.IMAGE_MAX_BYTES + 1), name=name)
    except ImageRefused as refused:
        raise FieldErrors("invalid_image", {"image": [str(refused)]}) from None
    field = image_context_field(task.config)
    with transaction.atomic():
        store_image(task, image, acting_user=user)
        context, _ = Context.objects.get_or_create(
            round=round_, uid=image.sha256, defaults={"data": {field: image.sha256}, "tag": UPLOAD_TAG},
        )
    return context
