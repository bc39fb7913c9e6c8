"""For the tests of audio tasks: synthetic clips made with numpy (tones, noise, sweeps) encoded with
soundfile in every accepted format, zips of them, the two built-in audio tasks (owner given), and
tiny random speech models saved with safetensors (see ``build_tiny_audio_classifier`` and
``build_tiny_ctc``)."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile

DEFINITIONS = Path(__file__).resolve().parents[1] / "tasks" / "data" / "task_definitions"
COMMANDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
FORMATS = {"wav": ("WAV", "PCM_16"), "flac": ("FLAC", "PCM_16"), "ogg": ("OGG", "VORBIS"), "opus": ("OGG", "OPUS"),
           "mp3": ("MP3", "MPEG_LAYER_III")}


def tone(freq: float = 440.0, *, seconds: float = 1.0, rate: int = 16000, channels: int = 1, amplitude: float = 0.3) -> np.ndarray:
    """A sine tone, float32, shape ``(frames,)`` or ``(frames, channels)``."""
    t = np.arange(int(seconds * rate)) / rate
    x = (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    return x if channels == 1 else np.stack([x] * channels, axis=1)


def noise(*, seconds: float = 1.0, rate: int = 16000, seed: int = 0, amplitude: float = 0.1) -> np.ndarray:
    """White noise, float32, shape ``(frames,)``."""
    return (amplitude * np.random.default_rng(seed).standard_normal(int(seconds * rate))).astype(np.float32)


def sweep(*, seconds: float = 1.0, rate: int = 16000, start: float = 100.0, end: float = 4000.0) -> np.ndarray:
    """A linear frequency sweep from ``start`` to ``end`` Hz, float32, shape ``(frames,)``."""
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * (start * t + (end - start) * t**2 / (2 * seconds))
    return (0.3 * np.sin(phase)).astype(np.float32)


def encode(samples: np.ndarray, ext: str = "wav", *, rate: int = 16000) -> bytes:
    """``samples`` encoded as ``ext`` (a key of ``FORMATS``) with soundfile."""
    import soundfile

    fmt, subtype = FORMATS[ext]
    out = io.BytesIO()
    soundfile.write(out, samples, 48000 if subtype == "OPUS" else rate, format=fmt, subtype=subtype)
    return out.getvalue()


def wav(*, rate=16000, channels=1, bits=16, data_size=None, payload=b"\x00\x00" * 1600) -> bytes:
    """A RIFF/WAVE file whose header says what the arguments say, whatever the payload holds."""
    block = channels * bits // 8
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * block, block, bits)
    size = len(payload) if data_size is None else data_size
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", size) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def half(data: bytes) -> bytes:
    """The first half of ``data`` (a truncated file)."""
    return data[: len(data) // 2]


def clip_file(name: str = "clip.wav", *, freq: float = 440.0, seconds: float = 1.0, rate: int = 16000) -> SimpleUploadedFile:
    """An uploaded clip: a tone encoded by the file's extension."""
    ext = name.rsplit(".", 1)[-1]
    samples = tone(freq, seconds=seconds, rate=48000 if ext == "opus" else rate)
    return SimpleUploadedFile(name, encode(samples, ext, rate=rate))


def zip_file(members: dict[str, bytes], name: str = "clips.zip") -> SimpleUploadedFile:
    """An uploaded zip of ``{path: bytes}``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in members.items():
            archive.writestr(path, data)
    return SimpleUploadedFile(name, out.getvalue())


def audio_task(owner, code: str = "spoken-commands"):
    """The built-in task ``code`` (``spoken-commands`` or ``spoken-sentences``) with ``owner`` as its owner."""
    from tasks.data.seed import create_task

    definition = json.loads((DEFINITIONS / f"{code}.json").read_text(encoding="utf-8"))
    task, _ = create_task(definition)
    task.owners.add(owner)
    return task


def _tiny_wav2vec2_config(**extra):
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, conv_dim=(16, 16),
        conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
        feat_extract_norm="layer", do_stable_layer_norm=True, mask_time_prob=0.0, classifier_proj_size=8, **extra,
    )


def _feature_extractor():
    from transformers import Wav2Vec2FeatureExtractor

    return Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True,
                                    return_attention_mask=True)


def build_tiny_audio_classifier(path: Path, labels: list[str], *, seed: int = 0) -> Path:
    """Save a tiny ``Wav2Vec2ForSequenceClassification`` (1 layer, hidden size 16, random weights,
    safetensors) whose ``id2label`` is ``labels``, with its feature extractor, under ``path``."""
    import torch
    from transformers import Wav2Vec2ForSequenceClassification

    torch.manual_seed(seed)
    config = _tiny_wav2vec2_config(num_labels=len(labels), id2label=dict(enumerate(labels)),
                                   label2id={label: i for i, label in enumerate(labels)})
    path = Path(path)
    Wav2Vec2ForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    _feature_extractor().save_pretrained(path)
    return path


CTC_VOCAB = ["<pad>", "<s>", "</s>", "<unk>", "|", *"abcdefghijklmnopqrstuvwxyz'"]


def build_tiny_ctc(path: Path, *, seed: int = 0) -> Path:
    """Save a tiny ``Wav2Vec2ForCTC`` (1 layer, hidden size 16, random weights, safetensors) with a
    ``Wav2Vec2Processor`` (its feature extractor and a character CTC tokenizer over ``CTC_VOCAB``)."""
    import torch
    from transformers import Wav2Vec2CTCTokenizer, Wav2Vec2ForCTC, Wav2Vec2Processor

    torch.manual_seed(seed)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = path / "vocab.json"
    vocab.write_text(json.dumps({token: i for i, token in enumerate(CTC_VOCAB)}), encoding="utf-8")
    tokenizer = Wav2Vec2CTCTokenizer(str(vocab), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
    config = _tiny_wav2vec2_config(vocab_size=len(CTC_VOCAB), pad_token_id=0, ctc_loss_reduction="mean")
    Wav2Vec2ForCTC(config).save_pretrained(path, safe_serialization=True)
    Wav2Vec2Processor(feature_extractor=_feature_extractor(), tokenizer=tokenizer).save_pretrained(path)
    return path
