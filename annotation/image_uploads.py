"""An annotator's own image as the context of their next example (tasks whose config sets
``annotator_image_uploads``): checked, cleaned and stored exactly as an owner's upload
(``tasks.data.images``), and added to the task's current open round as a context tagged
``annotator-upload`` (``annotation.own_contexts``)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from annotation.own_contexts import checked_upload, own_context, upload_round
from tasks.data.images import ImageRefused, check_image, image_context_field, store_image
from tasks.models import Context, Task


def add_image_context(*, user, task: Task, file) -> Context:
    """Check ``file`` (an uploaded image) and return the context of the task's open round that shows it
    (created when new; the same image twice is one context).

    Raises ``RuleError`` ``image_uploads_off`` (the task does not take annotators' images) or
    ``no_open_round``, ``NotAllowed`` (not an annotator of the task, or banned) and ``FieldErrors``
    ``invalid_image`` naming ``image`` with the reason the image is refused (nothing stored then).
    """
    field = image_context_field(task.config)
    takes = bool(task.config.get("annotator_image_uploads")) and field is not None
    round_ = upload_round(user=user, task=task, takes=takes, kind="image", what="images")
    image = checked_upload(
        file, max_bytes=settings.IMAGE_MAX_BYTES, check=lambda data, name: check_image(data, name=name), refused=ImageRefused,
        code="invalid_image", field="image", missing="Choose an image (PNG, JPEG, WebP or GIF).",
    )
    with transaction.atomic():
        store_image(task, image, acting_user=user)
        return own_context(round_=round_, field=field, sha256=image.sha256)
