"""In-process audio models for the registry (``tasks.loop.registry``): the predictors of the
``audio_classification`` and ``speech_recognition`` kinds, and ``SpeechHead``, the head class of
speech recognition (a ``*ForCTC`` model or ``WhisperForConditionalGeneration``).

Inputs name clips by sha256 (``tasks.data.audio``); their stored 16 kHz mono copies are read from the
default storage (``tasks.data.audio_files.read_model_samples``), resampled again only when the model's
feature extractor asks for another rate, sorted by length and run in batches of ``batch_size`` clips,
each batch padded by the model's own feature extractor to its longest clip (with an attention mask),
so short clips are not padded to long ones. Outputs come back in the caller's order.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from dynabench.errors import RuleError
from tasks.data.audio_files import MODEL_RATE
from tasks.loop.model_checks import ModelCheckCode
from tasks.loop.registry import DEFAULT_BATCH_SIZE, ClassificationPredictor, Predictor, _torch

#: Clips per forward by default (a minute of 16 kHz audio is 960,000 samples per clip).
DEFAULT_AUDIO_BATCH_SIZE = 16
DEFAULT_MAX_NEW_TOKENS = 128


class SpeechHead:
    """The head class of the speech recognition kind: ``from_pretrained(path, **kwargs)`` loads
    ``WhisperForConditionalGeneration`` when the directory's ``config.json`` says ``model_type``
    ``whisper``, else ``AutoModelForCTC``; the keyword arguments (``local_files_only``,
    ``use_safetensors``, ``trust_remote_code=False``, ...) are passed on unchanged."""

    @staticmethod
    def from_pretrained(path, **kwargs):
        from transformers import AutoModelForCTC, WhisperForConditionalGeneration

        config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
        head = WhisperForConditionalGeneration if config.get("model_type") == "whisper" else AutoModelForCTC
        return head.from_pretrained(path, **kwargs)


class _AudioInputs:
    """What both audio predictors share: reading clips and batching them by length."""

    def _setup(self, *, model, tokenizer, model_inputs, device, batch_size):
        # No tokenizer: ``tokenizer`` is the feature extractor or processor (``TaskKindSpec.load_processor``).
        self.model = model
        self.tokenizer = self.processor = tokenizer
        self.feature_extractor = getattr(tokenizer, "feature_extractor", tokenizer)
        self.rate = int(getattr(self.feature_extractor, "sampling_rate", MODEL_RATE) or MODEL_RATE)
        self.model_inputs = list(model_inputs)
        self.device = device
        self.batch_size = int(batch_size or min(DEFAULT_BATCH_SIZE, DEFAULT_AUDIO_BATCH_SIZE))
        self.max_length = 0
        self.nbytes = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
        self._tokenizer_lock = threading.Lock()

    def _clips(self, inputs) -> list[np.ndarray]:
        """Float32 mono samples at the model's rate, one per input; an input's audio field holds a
        clip's sha256 or, for benchmarks and tests, samples at 16 kHz (a 1-D numpy array)."""
        from tasks.data.audio_files import read_model_samples
        from tasks.data.resample import resample

        if isinstance(inputs, dict) or not hasattr(inputs, "__iter__"):
            raise RuleError(ModelCheckCode.BAD_INPUT, "predict() takes a list of input dicts.")
        name = self.model_inputs[0]
        clips = []
        for n, item in enumerate(inputs):
            value = item.get(name) if isinstance(item, dict) else None
            if isinstance(value, np.ndarray) and value.ndim == 1:
                samples = value.astype(np.float32, copy=False)
            elif isinstance(value, str) and value:
                try:
                    samples = read_model_samples(value)
                except FileNotFoundError as missing:
                    raise RuleError(ModelCheckCode.BAD_INPUT, f"Input {n}: {missing}.", field=name) from None
            else:
                raise RuleError(ModelCheckCode.BAD_INPUT, f"Input {n} needs the audio field '{name}' (a clip's sha256).", field=name)
            clips.append(resample(samples, MODEL_RATE, self.rate) if self.rate != MODEL_RATE else samples)
        return clips

    def _batches_of(self, clips, batch_size):
        """Yield lists of row indices, shortest clips first, ``batch_size`` per batch."""
        size = max(1, int(batch_size or self.batch_size))
        order = sorted(range(len(clips)), key=lambda i: clips[i].size)
        for start in range(0, len(order), size):
            yield order[start:start + size]

    def _features(self, clips, rows, padding="longest") -> dict:
        """The feature extractor's tensors of ``clips[rows]``, padded as ``padding`` says (``"longest"``:
        to the batch's longest clip; ``"max_length"``: to the extractor's own window), on the model's device."""
        with self._tokenizer_lock:
            batch = self.feature_extractor(
                [clips[r] for r in rows], sampling_rate=self.rate, padding=padding, return_attention_mask=True,
                return_tensors="pt",
            )
        batch = dict(batch)
        if self.device.type != "cpu":
            batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        return batch


class AudioClassificationPredictor(_AudioInputs, ClassificationPredictor):
    """Audio classification with ``AutoModelForAudioClassification`` and its feature extractor.

    ``predict(inputs)``: dicts whose single model input holds a clip's sha256 (or 16 kHz samples).
    Returns ``{"label", "probs": {task label: softmax probability}}`` per input, in the task's label
    order. Raises ``RuleError`` (``model_bad_input``) for a value that names no stored clip.
    """

    kind = "audio_classification"

    def __init__(self, *, labels, task_labels, model, tokenizer, model_inputs, device, batch_size=None):
        self._setup(model=model, tokenizer=tokenizer, model_inputs=model_inputs, device=device, batch_size=batch_size)
        self.labels = list(labels)
        self._task_order = [self.labels.index(label) for label in task_labels]
        self.task_labels = list(task_labels)

    def predict(self, inputs, *, batch_size=None):
        clips = self._clips(inputs)
        if not clips:
            return []
        probs = np.empty((len(clips), len(self.labels)), dtype=np.float32)
        with _torch().inference_mode():
            for rows in self._batches_of(clips, batch_size):
                logits = self.model(**self._features(clips, rows)).logits
                probs[rows] = logits.float().softmax(-1).cpu().numpy()
        probs = probs[:, self._task_order]
        labels = self.task_labels
        return [{"label": labels[b], "probs": dict(zip(labels, row))} for b, row in zip(probs.argmax(1).tolist(), probs.tolist())]


class SpeechRecognitionPredictor(_AudioInputs, Predictor):
    """Speech recognition: a ``*ForCTC`` model decoded greedily (the most likely token per frame,
    repeats merged and blanks dropped by the processor's CTC tokenizer, Graves et al., ICML 2006), or
    Whisper run with ``generate``.

    Whisper (Radford et al., 2022) hears a fixed window, ``n_samples`` of its feature extractor (30 s,
    3000 mel frames, in the released checkpoints): each clip is cut into consecutive windows, every window
    is padded to the full window (the encoder accepts no other length, so a clip's features are the same
    in any batch), the windows are transcribed in batches and a clip's transcript is its windows' joined
    in order. Decoding is greedy (one beam, no sampling), the task is forced to ``transcribe`` (never
    ``translate``) when the model is multilingual, the language is the model's own detection, and at
    most the task's ``max_new_tokens`` (default 128) are generated per window, capped so that the prompt
    (up to four tokens) and the answer fit the decoder's ``max_target_positions``.

    ``predict(inputs)``: dicts whose single model input holds a clip's sha256 (or 16 kHz samples).
    Returns ``{"transcript": text}`` per input (special tokens removed, white space collapsed).
    """

    kind = "speech_recognition"
    #: Whisper's prompt before the answer: start of transcript, language, task, no timestamps.
    WHISPER_PROMPT_TOKENS = 4

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "SpeechRecognitionPredictor":
        """Take ``max_new_tokens`` from the task's config (Whisper only)."""
        return cls(max_new_tokens=int(task.config.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)), **common)

    def __init__(self, *, model, tokenizer, model_inputs, device, batch_size=None, max_new_tokens=DEFAULT_MAX_NEW_TOKENS):
        self._setup(model=model, tokenizer=tokenizer, model_inputs=model_inputs, device=device, batch_size=batch_size)
        self.generates = getattr(model.config, "model_type", "") == "whisper"
        self.max_new_tokens = int(max_new_tokens)
        if self.generates:
            room = int(getattr(model.config, "max_target_positions", 448)) - self.WHISPER_PROMPT_TOKENS
            self.max_new_tokens = max(1, min(self.max_new_tokens, room))
            self.window = int(self.feature_extractor.n_samples)
            # A multilingual checkpoint transcribes when told to; an English-only one has no task tokens.
            self.task_kwargs = {"task": "transcribe"} if getattr(model.generation_config, "task_to_id", None) else {}

    def predict(self, inputs, *, batch_size=None):
        clips = self._clips(inputs)
        texts = self._generate(clips, batch_size) if self.generates else self._ctc(clips, batch_size)
        return [{"transcript": " ".join(text.split())} for text in texts]

    def _decode(self, ids) -> list[str]:
        with self._tokenizer_lock:
            return self.processor.batch_decode(ids, skip_special_tokens=True)

    def _ctc(self, clips, batch_size) -> list[str]:
        """One transcript per clip: greedy CTC, frames past a clip's own end (padding) cut before decoding."""
        out = [""] * len(clips)
        with _torch().inference_mode():
            for rows in self._batches_of(clips, batch_size):
                features = self._features(clips, rows)
                best = self.model(**features).logits.argmax(-1).cpu()
                lengths = self._frames(features, best.shape[1])
                for row, text in zip(rows, self._decode([r[:n] for r, n in zip(best, lengths)])):
                    out[row] = text
        return out

    def _generate(self, clips, batch_size) -> list[str]:
        """One transcript per clip: Whisper's windows of it (at least one) transcribed and joined."""
        windows, owner = [], []
        for n, clip in enumerate(clips):
            for start in range(0, max(1, clip.size), self.window):
                windows.append(clip[start:start + self.window])
                owner.append(n)
        parts = [""] * len(windows)
        with _torch().inference_mode():
            for rows in self._batches_of(windows, batch_size):
                features = self._features(windows, rows, padding="max_length")
                ids = self.model.generate(
                    input_features=features["input_features"], attention_mask=features.get("attention_mask"),
                    max_new_tokens=self.max_new_tokens, num_beams=1, do_sample=False, **self.task_kwargs,
                )
                for row, text in zip(rows, self._decode(ids.cpu().tolist())):
                    parts[row] = text
        out = [[] for _ in clips]
        for n, text in zip(owner, parts):
            out[n].append(text)
        return [" ".join(texts) for texts in out]

    def _frames(self, features, width: int) -> list[int]:
        """The number of output frames of each clip of a padded batch (its own length, not the batch's)."""
        mask = features.get("attention_mask")
        lengths_of = getattr(self.model, "_get_feat_extract_output_lengths", None)
        if mask is None or lengths_of is None:
            return [width] * len(features["input_values"])
        return [min(width, int(n)) for n in lengths_of(mask.sum(-1)).cpu().tolist()]
