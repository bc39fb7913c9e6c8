"""Audio clips as contexts: check, decode, store and serve clips uploaded by a task's owners (and,
one at a time, by annotators of a task that allows it).

One flow for the console page, the REST API and tests (``ingest_audio``):

1. Every file is read and checked before anything is stored (all-or-nothing): single clips
   (``.wav``, ``.flac``, ``.ogg``/``.opus``, ``.mp3``) or zips of them (``tasks.data.zips``: paths
   outside the zip's folder, links, too many members or too many unpacked bytes refuse the zip).
2. ``check_audio`` reads each clip with ``soundfile`` (libsndfile, shipped inside its wheel) and
   refuses, with a message naming the file: more than ``settings.AUDIO_MAX_BYTES`` bytes; bytes
   libsndfile does not read as audio, or a container outside ``ALLOWED_FORMATS`` (detected from the
   bytes, never the name); a header whose sample rate is outside ``AUDIO_MIN_SAMPLE_RATE`` ..
   ``AUDIO_MAX_SAMPLE_RATE``, whose channels are 0 or more than ``AUDIO_MAX_CHANNELS``, or whose
   length is over ``AUDIO_MAX_SECONDS`` (read from the header before decoding; decoding stops one
   frame past the limit whatever the header says); a WAV whose data chunk declares more bytes
   than the file holds, a clip that decodes to fewer frames than its header declares, or one the
   decoder stops on (truncated or damaged); no frames; samples that are not finite.
3. The clip is re-encoded as 16-bit FLAC with no metadata (ID3 tags, Vorbis comments and WAV
   INFO chunks may carry a label or a speaker's name), channels and rate kept; its stored name is
   the sha256 of those bytes (``audio/<sha256>.flac``). A 16 kHz mono copy for models is made at
   the same time (channels averaged, resampled by ``tasks.data.resample``: numpy polyphase
   windowed sinc, since torchaudio is not installed) and stored beside it (``audio/16k/``).
4. The task's quota: the seconds of all its clips may not pass ``AUDIO_TASK_QUOTA_SECONDS``.
5. Each clip becomes a ``ContextAudio`` and a ``Context`` of the chosen round whose audio field
   holds the sha256 (uid = the sha256, so the same clip twice is one context).

Both files go through Django's default storage, as images do, so an S3 bucket works the same way.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Sum

from dynabench.errors import FieldErrors
from dynabench.filestore import AllOrNothing
from tasks.data.audio_files import MODEL_RATE, audio_context_fields, model_name, stored_name
from tasks.data.resample import resample, to_mono
from tasks.data.media_uploads import upload_target
from tasks.data.zips import zip_members
from tasks.models import Context, ContextAudio, Task

ALLOWED_FORMATS = {"WAV": "WAV", "WAVEX": "WAV", "FLAC": "FLAC", "OGG": "OGG", "MP3": "MP3"}
"""libsndfile container → the format recorded (OGG holds Vorbis or Opus)."""
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".oga", ".mp3")
ZIP_SUFFIX = ".zip"
TRUNCATION_SLACK = 0.01
"""A clip may decode to this share of its declared frames fewer (MP3 headers estimate their length)."""


class AudioRefused(ValueError):
    """A clip that fails a check; ``str()`` says why, naming the file."""


@dataclass
class CheckedAudio:
    """A clip that passed every check, re-encoded without metadata.

    ``data``: 16-bit FLAC bytes at the clip's rate and channels; ``sha256``: their hex digest;
    ``model_data``: 16-bit FLAC bytes, 16 kHz mono; ``source_format``: WAV | FLAC | OGG | MP3;
    ``sample_rate`` (Hz), ``channels``, ``duration_s`` (seconds); ``original_name``: the uploaded
    file's base name (or its path in its zip).
    """

    data: bytes
    sha256: str
    model_data: bytes
    source_format: str
    sample_rate: int
    channels: int
    duration_s: float
    original_name: str


@dataclass
class IngestResult:
    """What ``ingest_audio`` did: ``added`` new contexts, ``unchanged`` (already a context of the
    round), ``clips`` (the ``ContextAudio`` records, new or existing)."""

    added: int = 0
    unchanged: int = 0
    clips: list = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.added} audio context(s) added, {self.unchanged} already there."


def _soundfile():
    import soundfile  # imported lazily: pages that never touch audio need not load libsndfile

    return soundfile


def _wav_data_overrun(data: bytes) -> int:
    """Bytes a RIFF/WAVE file's ``data`` chunk declares beyond the end of the file (0 when it fits
    or the file is not RIFF/WAVE)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return 0
    at = 12
    while at + 8 <= len(data):
        chunk, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        if chunk == b"data":
            return max(0, at + 8 + size - len(data))
        at += 8 + size + (size & 1)
    return 0


def _encode_flac(samples: np.ndarray, rate: int) -> bytes:
    out = io.BytesIO()
    _soundfile().write(out, np.clip(samples, -1.0, 1.0), rate, format="FLAC", subtype="PCM_16")
    return out.getvalue()


def _decode(data: bytes, name: str) -> tuple[np.ndarray, int, str]:
    """Check the header, then decode; return ``(samples (frames, channels) float32, rate, format)``."""
    sf = _soundfile()
    kinds = "WAV, FLAC, OGG (Vorbis or Opus) or MP3"
    try:
        info = sf.info(io.BytesIO(data))
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError):
        raise AudioRefused(f"'{name}' is not audio that can be read as {kinds}.") from None
    if info.format not in ALLOWED_FORMATS:
        raise AudioRefused(f"'{name}' is {info.format_info}; upload {kinds}.")
    rate, channels = int(info.samplerate), int(info.channels)
    low, high, most = settings.AUDIO_MIN_SAMPLE_RATE, settings.AUDIO_MAX_SAMPLE_RATE, settings.AUDIO_MAX_CHANNELS
    if not low <= rate <= high:
        raise AudioRefused(f"'{name}' has a sample rate of {rate:,} Hz; the limits are {low:,} to {high:,} Hz.")
    if not 1 <= channels <= most:
        raise AudioRefused(f"'{name}' has {channels} channels; upload mono or up to {most} channels.")
    max_seconds = settings.AUDIO_MAX_SECONDS
    max_frames = int(max_seconds * rate)
    if info.frames > max_frames:
        raise AudioRefused(f"'{name}' lasts {info.frames / rate:,.1f} s; the limit is {max_seconds:g} s per clip.")
    if _wav_data_overrun(data):
        raise AudioRefused(f"'{name}' is truncated: its header declares more audio than the file holds; export it again.")
    try:
        with sf.SoundFile(io.BytesIO(data)) as clip:
            samples = clip.read(frames=max_frames + 1, dtype="float32", always_2d=True)
    except (sf.SoundFileError, RuntimeError, ValueError, MemoryError) as error:
        raise AudioRefused(f"'{name}' is damaged or truncated ({error}); export it again.") from None
    if len(samples) > max_frames:
        raise AudioRefused(f"'{name}' lasts more than {max_seconds:g} s; the limit is {max_seconds:g} s per clip.")
    if len(samples) == 0:
        raise AudioRefused(f"'{name}' holds no audio.")
    if len(samples) < info.frames * (1 - TRUNCATION_SLACK) - 1152:
        raise AudioRefused(
            f"'{name}' is truncated: it decodes to {len(samples):,} of the {info.frames:,} frames its header declares; export it again."
        )
    if not np.isfinite(samples).all():
        raise AudioRefused(f"'{name}' holds samples that are not numbers (NaN or infinite); export it again.")
    return samples, rate, ALLOWED_FORMATS[info.format]


def check_audio(data: bytes, *, name: str, original_name: str | None = None) -> CheckedAudio:
    """Check one clip (``data``: its bytes; ``name``: its file name, for messages) and return it
    cleaned, with its 16 kHz mono copy; raise ``AudioRefused`` saying what is wrong (see the module
    docstring). ``original_name``: the name kept for its owners (default the base name of ``name``)."""
    max_bytes = settings.AUDIO_MAX_BYTES
    if len(data) > max_bytes:
        raise AudioRefused(f"'{name}' has {len(data):,} bytes; the limit is {max_bytes:,} bytes per clip.")
    if not data:
        raise AudioRefused(f"'{name}' is empty.")
    samples, rate, fmt = _decode(data, name)
    clean = _encode_flac(samples, rate)
    model = _encode_flac(resample(to_mono(samples), rate, MODEL_RATE), MODEL_RATE)
    return CheckedAudio(
        data=clean, sha256=hashlib.sha256(clean).hexdigest(), model_data=model, source_format=fmt,
        sample_rate=rate, channels=samples.shape[1], duration_s=len(samples) / rate,
        original_name=(original_name or posixpath.basename(name))[:255],
    )


def _refuse(message: str):
    raise AudioRefused(message)


CHECK_THREADS = min(4, os.cpu_count() or 1)
"""Clips of one upload checked at once: decoding, FLAC encoding (libsndfile) and resampling (numpy)
release the GIL, so the threads use the machine's cores."""


def read_uploads(files) -> list[CheckedAudio]:
    """Check every uploaded file (Django ``UploadedFile`` s or objects with ``name`` and ``read()``):
    clips and zips of clips, on ``CHECK_THREADS`` threads. Return the cleaned clips in upload order;
    raise ``AudioRefused`` for the first bad one in that order."""
    clips = []  # (bytes, name for messages, name kept)
    for upload in files:
        name = posixpath.basename(str(upload.name).replace("\\", "/"))
        data = upload.read(settings.AUDIO_ZIP_MAX_BYTES + 1)
        if name.lower().endswith(ZIP_SUFFIX):
            members = zip_members(
                data, name, suffixes=AUDIO_SUFFIXES, what="audio clip", max_members=settings.AUDIO_ZIP_MAX_MEMBERS,
                max_member_bytes=settings.AUDIO_MAX_BYTES, max_total_bytes=settings.AUDIO_ZIP_MAX_BYTES, refuse=_refuse,
            )
            clips.extend((content, f"{name}/{member}", member) for member, content in members)
        elif name.lower().endswith(AUDIO_SUFFIXES):
            clips.append((data, name, None))
        else:
            raise AudioRefused(f"'{name}' is neither an audio clip ({', '.join(AUDIO_SUFFIXES)}) nor a .zip of clips.")
    if len(clips) < 2:
        return [check_audio(data, name=name, original_name=kept) for data, name, kept in clips]
    with ThreadPoolExecutor(max_workers=CHECK_THREADS, thread_name_prefix="audio-check") as pool:
        return list(pool.map(lambda clip: check_audio(clip[0], name=clip[1], original_name=clip[2]), clips))


def audio_context_field(config: dict) -> str | None:
    """The name of the task's first context field of ``"type": "audio"``, or None."""
    return next(iter(audio_context_fields(config)), None)


def _store_files(clip: CheckedAudio, files: AllOrNothing) -> None:
    """Store the clip and its model copy through ``files`` unless already stored (content-addressed:
    same name, same bytes); a failed write (a full disk) leaves no truncated file under either name."""
    if not files.storage.exists(stored_name(clip.sha256)):
        files.save(stored_name(clip.sha256), ContentFile(clip.data))
    if not files.storage.exists(model_name(clip.sha256)):
        files.save(model_name(clip.sha256), ContentFile(clip.model_data))


def check_quota(task: Task, clips: list[CheckedAudio]) -> None:
    """Raise ``AudioRefused`` when storing ``clips`` (those not yet the task's) would take the task's
    audio past ``settings.AUDIO_TASK_QUOTA_SECONDS``."""
    known = set(ContextAudio.objects.filter(task=task, sha256__in=[c.sha256 for c in clips]).values_list("sha256", flat=True))
    adding = sum(c.duration_s for c in {c.sha256: c for c in clips if c.sha256 not in known}.values())
    held = ContextAudio.objects.filter(task=task).aggregate(s=Sum("duration_s"))["s"] or 0.0
    quota = settings.AUDIO_TASK_QUOTA_SECONDS
    if held + adding > quota:
        raise AudioRefused(
            f"Task {task.code} holds {held / 60:,.1f} min of audio; these {adding / 60:,.1f} min would pass its quota "
            f"of {quota / 60:,.0f} min. Remove clips or ask an admin to raise AUDIO_TASK_QUOTA_SECONDS."
        )


def store_clip(task: Task, clip: CheckedAudio, *, acting_user=None) -> ContextAudio:
    """Store a checked clip and return its ``ContextAudio`` for ``task`` (created when new). When it
    fails (a full disk), the files it stored are removed."""
    with AllOrNothing(default_storage) as files:
        _store_files(clip, files)
        record, _ = ContextAudio.objects.get_or_create(task=task, sha256=clip.sha256, defaults=_fields(clip, acting_user))
    return record


def _fields(clip: CheckedAudio, acting_user) -> dict:
    return {"source_format": clip.source_format, "sample_rate": clip.sample_rate, "channels": clip.channels,
            "duration_s": clip.duration_s, "size": len(clip.data), "original_name": clip.original_name,
            "uploaded_by": acting_user}


def ingest_audio(*, task: Task, acting_user, files, round_number: int) -> IngestResult:
    """Check every file, then store each clip and make it a context of round ``round_number``.

    ``files``: uploaded clips and/or zips of clips. All-or-nothing: the first refused clip refuses
    the upload and nothing is stored. Raises ``NotAllowed`` for a non-owner and ``FieldErrors``
    (``invalid_upload``) naming the field at fault: ``files`` (the reason, naming the file, or the
    quota), ``round`` (no such round), or ``files`` again when the task has no audio context field.
    When storing fails (a full disk: ``OSError``), the files this upload stored are removed and no
    record is kept.
    """
    field_name = audio_context_field(task.config)
    files, round_ = upload_target(task=task, acting_user=acting_user, files=files, round_number=round_number,
                                  field_name=field_name, media="audio", choose="Choose audio clips (WAV, FLAC, OGG/Opus, MP3) or a zip of them.")
    try:
        checked = read_uploads(files)
        check_quota(task, checked)
    except AudioRefused as refused:
        raise FieldErrors("invalid_upload", {"files": [str(refused)]}) from None
    unique = list({clip.sha256: clip for clip in checked}.values())
    hashes = [clip.sha256 for clip in unique]
    with AllOrNothing(default_storage) as stored, transaction.atomic():
        known = set(ContextAudio.objects.filter(task=task, sha256__in=hashes).values_list("sha256", flat=True))
        for clip in unique:
            _store_files(clip, stored)
        ContextAudio.objects.bulk_create(
            [ContextAudio(task=task, sha256=c.sha256, **_fields(c, acting_user)) for c in unique if c.sha256 not in known],
            ignore_conflicts=True,
        )
        existing = set(Context.objects.filter(round=round_, uid__in=hashes).values_list("uid", flat=True))
        new = [Context(round=round_, uid=sha, data={field_name: sha}) for sha in hashes if sha not in existing]
        Context.objects.bulk_create(new)
    return IngestResult(
        added=len(new), unchanged=len(checked) - len(new),
        clips=list(ContextAudio.objects.filter(task=task, sha256__in=hashes)),
    )


def open_clip(record: ContextAudio):
    """Open a stored clip (as uploaded, FLAC) from the storage; return ``(file, content type)``."""
    from tasks.data.audio_files import CONTENT_TYPE

    return default_storage.open(stored_name(record.sha256), "rb"), CONTENT_TYPE
