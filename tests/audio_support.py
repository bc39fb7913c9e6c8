"""For the tests of audio tasks: synthetic clips made with numpy (tones, noise, sweeps) encoded with
soundfile in every accepted format, zips of them, the two built-in audio tasks (owner given), and
tiny random speech models saved with safetensors (see ``build_tiny_audio_classifier``,
``build_tiny_ctc`` and ``build_tiny_whisper``)."""

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


#: The special tokens of Whisper's decoder prompt and vocabulary, in Whisper's order (two languages).
WHISPER_SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|fr|>", "<|translate|>", "<|transcribe|>",
                    "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]
WHISPER_MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "a"), ("i", "n"), ("o", "n"), ("e", "r"), ("Ġ", "o")]


def _whisper_tokenizer():
    """A byte-level BPE ``WhisperTokenizer`` built here: the 256 byte symbols, ``WHISPER_MERGES``, then
    ``WHISPER_SPECIALS`` (special, so ``skip_special_tokens`` drops them), prompting English transcription."""
    from transformers import WhisperTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = [*bytes_to_unicode().values(), *("".join(pair) for pair in WHISPER_MERGES), *WHISPER_SPECIALS]
    tokenizer = WhisperTokenizer(vocab={s: i for i, s in enumerate(symbols)}, merges=list(WHISPER_MERGES))
    tokenizer.add_special_tokens({"additional_special_tokens": WHISPER_SPECIALS[1:]})
    tokenizer.set_prefix_tokens(language="en", task="transcribe")
    return tokenizer


def _whisper_suppressed(tokenizer) -> list[int]:
    """The ids a tiny Whisper never writes (as checkpoints suppress symbols): every byte but lowercase
    letters, the space and the apostrophe, so that its random answers read as words."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = bytes_to_unicode()
    kept = {symbols[b] for b in b"abcdefghijklmnopqrstuvwxyz '"}
    return tokenizer.convert_tokens_to_ids([s for s in symbols.values() if s not in kept])


def build_tiny_whisper(path: Path, *, seed: int = 0, chunk_seconds: int = 2, max_target_positions: int = 32) -> Path:
    """Save a tiny multilingual ``WhisperForConditionalGeneration`` (1 encoder and 1 decoder layer,
    ``d_model`` 32, 16 mel bins, random weights, safetensors) with a ``WhisperProcessor``: a
    ``WhisperFeatureExtractor`` whose window is ``chunk_seconds`` (``max_source_positions`` = half its
    frames, as the encoder's stride-2 convolution needs) and the tokenizer of ``_whisper_tokenizer``;
    its generation config names the prompt tokens (languages ``en`` and ``fr``, transcribe/translate,
    no timestamps) as Whisper checkpoints do. ``max_target_positions`` bounds prompt plus answer."""
    import torch
    from transformers import (GenerationConfig, WhisperConfig, WhisperFeatureExtractor,
                              WhisperForConditionalGeneration, WhisperProcessor)

    torch.manual_seed(seed)
    path = Path(path)
    tokenizer = _whisper_tokenizer()
    ids = dict(zip(WHISPER_SPECIALS, tokenizer.convert_tokens_to_ids(WHISPER_SPECIALS)))
    eot, start = ids["<|endoftext|>"], ids["<|startoftranscript|>"]
    extractor = WhisperFeatureExtractor(feature_size=16, sampling_rate=16000, hop_length=160, chunk_length=chunk_seconds, n_fft=400)
    config = WhisperConfig(
        vocab_size=len(tokenizer), num_mel_bins=16, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=extractor.nb_max_frames // 2,
        max_target_positions=max_target_positions, decoder_start_token_id=start, pad_token_id=eot, bos_token_id=eot,
        eos_token_id=eot, begin_suppress_tokens=[eot], suppress_tokens=[], init_std=0.5,
    )
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=start, bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, max_length=max_target_positions,
        is_multilingual=True, lang_to_id={lang: ids[lang] for lang in ("<|en|>", "<|fr|>")},
        task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        no_timestamps_token_id=ids["<|notimestamps|>"], begin_suppress_tokens=[eot], suppress_tokens=_whisper_suppressed(tokenizer),
    )
    model.save_pretrained(path, safe_serialization=True)
    extractor.save_pretrained(path)
    WhisperProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(path)
    return path
