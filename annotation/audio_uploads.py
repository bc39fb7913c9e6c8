"""An annotator's own clip as the context of their next example (tasks whose config sets
``annotator_audio_uploads``): recorded in the browser (``static/js/record.js`` sends it as a 16-bit
WAV) or chosen as a file, checked, cleaned and stored exactly as an owner's clip
(``tasks.data.audio``: format, length, rate, channels, damage, the task's quota), and added to the
task's current open round as a context tagged ``annotator-upload`` (``annotation.own_contexts``)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from annotation.own_contexts import checked_upload, own_context, upload_round
from tasks.data.audio import AudioRefused, audio_context_field, check_audio, check_quota, store_clip
from tasks.models import Context, Task


def _checked(task: Task, data: bytes, name: str):
    clip = check_audio(data, name=name)
    check_quota(task, [clip])
    return clip


def add_audio_context(*, user, task: Task, file) -> Context:
    """Check ``file`` (an uploaded clip) and return the context of the task's open round that plays it
    (created when new; the same clip twice is one context).

    Raises ``RuleError`` ``audio_uploads_off`` (the task does not take annotators' clips) or
    ``no_open_round``, ``NotAllowed`` (not an annotator of the task, or banned) and ``FieldErrors``
    ``invalid_audio`` naming ``clip`` with the reason the clip is refused (nothing stored then).
    """
    field = audio_context_field(task.config)
    takes = bool(task.config.get("annotator_audio_uploads")) and field is not None
    round_ = upload_round(user=user, task=task, takes=takes, kind="audio", what="clips")
    clip = checked_upload(
        file, max_bytes=settings.AUDIO_MAX_BYTES, check=lambda data, name: _checked(task, data, name), refused=AudioRefused,
        code="invalid_audio", field="clip", missing="Record a clip or choose an audio file (WAV, FLAC, OGG/Opus or MP3).",
    )
    with transaction.atomic():
        store_clip(task, clip, acting_user=user)
        return own_context(round_=round_, field=field, sha256=clip.sha256)
