"""Where stored audio clips live, without the ORM: their names in the default storage and reading
one back by its sha256. Each clip is stored twice, content-addressed by the sha256 of the first file:
``audio/<sha256>.flac`` (as uploaded: channels and sample rate kept, 16-bit FLAC, no metadata; what
pages play) and ``audio/16k/<sha256>.flac`` (16 kHz mono, what models read, ``MODEL_RATE``).

The models in the loop (``tasks.loop.audio``) read clips through this module, since
``tasks.data.audio`` builds on the models.
"""

from __future__ import annotations

import io
import re

import numpy as np
from django.core.files.storage import default_storage

CONTENT_TYPE = "audio/flac"
MODEL_RATE = 16000
"""Hz of the stored model copy: the rate of wav2vec 2.0, HuBERT, WavLM and Whisper."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def audio_context_fields(config: dict) -> list[str]:
    """The names of the task config's context fields of ``"type": "audio"`` (they hold a clip's sha256)."""
    return [f["name"] for f in config.get("context_fields", []) if f.get("type") == "audio"]


def stored_name(sha256: str) -> str:
    """The storage name of a clip as uploaded: ``audio/<sha256>.flac``."""
    return f"audio/{sha256}.flac"


def model_name(sha256: str) -> str:
    """The storage name of a clip's 16 kHz mono copy: ``audio/16k/<sha256>.flac``."""
    return f"audio/16k/{sha256}.flac"


def _checked(sha256: str) -> str:
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise FileNotFoundError(f"not a clip hash: {str(sha256)[:64]!r}")
    return sha256


def read_stored(sha256: str) -> tuple[bytes, str]:
    """Return ``(FLAC bytes, content type)`` of the stored clip with this sha256 (64 lower-case hex
    digits). Raises ``FileNotFoundError`` when the value is not such a hash or no clip of it is stored."""
    name = stored_name(_checked(sha256))
    if not default_storage.exists(name):
        raise FileNotFoundError(f"no stored clip {sha256}")
    with default_storage.open(name, "rb") as fh:
        return fh.read(), CONTENT_TYPE


def read_model_flac(sha256: str) -> bytes:
    """Return the FLAC bytes of the stored clip's 16 kHz mono copy (what endpoint models are sent).
    Raises ``FileNotFoundError`` when the value is not a clip hash or no clip of it is stored."""
    name = model_name(_checked(sha256))
    if not default_storage.exists(name):
        raise FileNotFoundError(f"no stored clip {sha256}")
    with default_storage.open(name, "rb") as fh:
        return fh.read()


def read_model_samples(sha256: str) -> np.ndarray:
    """Return the stored clip's 16 kHz mono samples as float32 in [-1, 1], shape ``(frames,)``.
    Raises ``FileNotFoundError`` when the value is not a clip hash or no clip of it is stored."""
    import soundfile

    samples, _ = soundfile.read(io.BytesIO(read_model_flac(sha256)), dtype="float32", always_2d=False)
    return samples


def model_flac(samples: np.ndarray) -> bytes:
    """``samples`` (float32 mono at ``MODEL_RATE``, shape ``(frames,)``) as 16-bit FLAC bytes, the format of
    the stored model copy."""
    import soundfile

    out = io.BytesIO()
    soundfile.write(out, np.asarray(samples, dtype=np.float32), MODEL_RATE, format="FLAC", subtype="PCM_16")
    return out.getvalue()
