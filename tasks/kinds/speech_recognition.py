"""The ``speech_recognition`` kind: the context is a clip of speech (``tasks.data.audio``), the target
is the annotator's transcript of it; WER and CER (``tasks/metrics/speech.py``, after its
normalisation of case, punctuation and numbers); the model is wrong when its WER against the
transcript is above the owner's threshold (0.3 by default)."""

from __future__ import annotations

import json

import numpy as np

from dynabench.errors import RuleError
from tasks.error_codes import TargetErrorCode
from tasks.kinds.audio_classification import AUDIO_UPLOADS_PROPERTY, one_audio_input_errors
from tasks.kinds.base import ItemScores, TargetError, TaskKindSpec, register
from tasks.loop.model_checks import ModelCheckCode

DEFAULT_WER_THRESHOLD = 0.3
"""Utterance WER above which a transcription counts as wrong when the config does not say."""
MAX_TRANSCRIPT_CHARS = 5000


def wer_threshold(config: dict) -> float:
    """Return the task's WER threshold (a fraction): a model whose utterance WER is above it is wrong."""
    return float(config.get("model_wrong", {}).get("threshold", DEFAULT_WER_THRESHOLD))


def _transcripts(value) -> list[str] | None:
    """The transcripts of a raw target value (a string, or a list of strings), or None when malformed."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(t, str) and t.strip() for t in value):
        return None
    if any(len(t) > MAX_TRANSCRIPT_CHARS for t in value):
        return None
    return [" ".join(t.split()) for t in value]


@register
class SpeechRecognitionSpec(TaskKindSpec):
    """Speech recognition: a clip of speech and one or more reference transcripts.

    Config: one context field of ``"type": "audio"`` named as the only ``model_inputs`` entry;
    ``model_wrong`` ``{"rule": "wer_above", "threshold": 0.3}``; ``perf_metric`` ``wer`` or
    ``cer``. Target ``{"transcripts": [text, ...]}`` (the annotator writes one; datasets may carry
    several, and an utterance is scored against the one it matches best); model output
    ``{"transcript": text}``. Transcripts are compared after
    ``tasks.metrics.speech.normalise_transcript``: case folded, numbers written as words
    (``2`` = ``two``), punctuation and symbols dropped (apostrophes inside words kept), white
    space collapsed. Per-item score ``wer`` (utterance WER). Both metrics are error rates, lower
    is better (``lower_is_better``): the leaderboard turns them round before the Dynascore. Models:
    Hugging Face ``*ForCTC`` directories (wav2vec 2.0, HuBERT, ...) decoded greedily,
    ``WhisperForConditionalGeneration`` run with ``generate``, or endpoint models speaking the
    OpenAI-compatible transcriptions API (``endpoint_apis``; the clip sent by ``endpoint_messages``).
    """

    name = "speech_recognition"
    display_name = "Speech recognition"
    has_labels = False
    target_field = "transcripts"
    prediction_field = "transcript"
    score_key = "wer"
    correction_field = "corrected_transcript"
    architecture_suffix = ("ForCTC", "WhisperForConditionalGeneration")
    predictor_class = "tasks.loop.audio.SpeechRecognitionPredictor"
    processor_files = ("preprocessor_config.json", "processor_config.json")
    processor_summary = "its processor (<code>preprocessor_config.json</code> with the tokenizer of its transcripts)"
    config_properties = {
        **AUDIO_UPLOADS_PROPERTY,
        "max_new_tokens": {"type": "integer", "minimum": 1, "maximum": 448},
    }
    model_wrong_rule = "wer_above"
    perf_metrics = ("wer", "cer")
    lower_is_better = ("wer", "cer")
    submissions = ("model", "predictions", "endpoint")
    endpoint_apis = ("transcriptions",)
    perturbations = "audio"

    def config_errors(self, config):
        errors = one_audio_input_errors(config, "speech recognition")
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: a speech recognition task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] not in self.perf_metrics:
            errors.append(f"config.perf_metric: a speech recognition task uses one of {', '.join(self.perf_metrics)}")
        return errors

    def clean_target(self, config, example_input, target):
        """``{"transcripts": [text]}``: what the clip says, non-empty, white space collapsed."""
        target = target if isinstance(target, dict) else {}
        transcripts = _transcripts(target.get("transcripts", target.get("transcript")))
        if transcripts is None:
            raise RuleError(
                TargetErrorCode.INVALID_REFERENCE,
                f"Write what the clip says, word for word (at most {MAX_TRANSCRIPT_CHARS} characters).",
                field="transcript",
            )
        return {"transcripts": transcripts}

    def import_target(self, config, raw, inputs, *, source):
        """A transcript, a list of them, or either as a JSON string (CSV)."""
        if isinstance(raw, str) and raw.lstrip().startswith("["):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                raise TargetError(f"field '{source}' is not a JSON list of transcripts") from None
        transcripts = _transcripts(raw)
        if transcripts is None:
            raise TargetError(f"field '{source}': expected a transcript or a non-empty list of transcripts")
        return {"transcripts": transcripts}

    def target_from_row(self, config, row, inputs):
        transcripts = _transcripts(row.get("transcripts"))
        if transcripts is None:
            return None, "no transcript"
        return {"transcripts": transcripts}, None

    def form_fields(self, config, *, optional_label=False):
        from django import forms

        return {"transcript": forms.CharField(
            required=False, strip=True, max_length=MAX_TRANSCRIPT_CHARS, widget=forms.Textarea(attrs={"rows": 2}),
            label="What the clip says (optional)" if optional_label else "What the clip says, word for word",
        )}

    def target_from_form(self, cleaned, *, optional=False):
        transcript = cleaned.get("transcript") or ""
        if optional and not transcript.strip():
            return None
        return {"transcripts": [transcript]}

    def form_initial(self, target):
        return {"transcript": (target.get("transcripts") or [""])[0]}

    def model_wrong(self, config, target, model_output):
        """Utterance WER of ``model_output["transcript"]`` against the transcripts ``> wer_threshold(config)``."""
        from tasks.metrics.speech import utterance_wer

        return utterance_wer(str(model_output.get("transcript") or ""), target["transcripts"]) > wer_threshold(config)

    def answer_matches(self, config, gold, answer):
        """The answer's transcript is within the WER threshold of the gold transcripts."""
        from tasks.metrics.speech import utterance_wer

        text = (answer.get("transcripts") or [""])[0]
        return utterance_wer(text, gold.get("transcripts") or [""]) <= wer_threshold(config)

    def answer_display(self, config, example_input, target, output):
        """``transcript`` (the model's), ``reference`` (the annotator's) and ``wer`` between them."""
        from tasks.metrics.speech import utterance_wer

        transcript = str(output.get("transcript") or "")
        return {
            "transcript": transcript,
            "reference": (target.get("transcripts") or [""])[0] if target else None,
            "wer": utterance_wer(transcript, target["transcripts"]) if target else None,
        }

    def parse_prediction(self, config, value):
        if not isinstance(value, str):
            return None, ("the transcript is not a string", type(value).__name__)
        return value, None

    def score(self, config, items, outputs):
        """Corpus WER and CER (``tasks.metrics.speech.corpus_scores``) over all rows or a subset;
        per item, the utterance WER. Raises ``RuleError`` (``bad_item``) for an item without a transcript."""
        from tasks.metrics.speech import best_errors, corpus_rate

        references = []
        for item in items:
            refs = _transcripts((item["target"] or {}).get("transcripts"))
            if refs is None:
                raise RuleError("bad_item", f"Item {item['uid']} of the dataset has no transcript ({item['target']!r}).")
            references.append(refs)
        hypotheses = [str(o.get("transcript") or "") for o in outputs]
        words = [best_errors(h, r, unit="word") for h, r in zip(hypotheses, references)]
        chars = [best_errors(h, r, unit="char") for h, r in zip(hypotheses, references)]
        per_item = [w.rate for w in words]

        def metrics(rows):
            rows = range(len(words)) if rows is None else rows
            return {
                "wer": corpus_rate([words[i] for i in rows]), "cer": corpus_rate([chars[i] for i in rows]), "n": len(rows),
            }

        return ItemScores(per_item=per_item, item_results=np.array(per_item, dtype=np.float32), _metrics=metrics)

    def consistency(self, config, original, perturbed):
        """Robustness of a transcriber: ``1 - WER`` (or CER, the task's perf metric) of its transcripts of the
        perturbed clips (``leaderboard/audio_perturbations.py``: noise, speed) against its own transcripts of
        the originals as references, both normalised (``normalise_transcript``), as corpus rates over all
        pairs, clipped to [0, 1]. 1 when every perturbed transcript equals the original after normalisation.

        The kind's perf metric rather than exact equality, as Dynaboard measures consistency (and the text
        kinds do): a one-word slip in a long sentence costs that word, not the whole clip. A pair whose
        original transcript is empty counts its perturbed words as insertions (``corpus_rate``)."""
        from tasks.metrics.speech import corpus_scores

        scores = corpus_scores(
            [p.get("transcript") or "" for p in perturbed], [[o.get("transcript") or ""] for o in original],
        )
        return float(min(1.0, max(0.0, 1.0 - scores[config["perf_metric"]])))

    endpoint_answer_rule = (
        "The endpoint answers the OpenAI-compatible transcriptions API (POST /v1/audio/transcriptions: the clip as "
        "16 kHz mono FLAC, response_format json); its text, stripped of surrounding white space, is the transcript."
    )

    def endpoint_messages(self, config, model_input, prompt=None):
        """The clip of the model input as ``tasks.loop.endpoints.base.audio_messages``: the stored 16 kHz mono
        FLAC copy (its sha256 in the audio field), or samples at 16 kHz (a numpy array, in benchmarks and
        tests) encoded so. No text is sent (the transcriptions API's hint is the endpoint's ``prompt``
        parameter). Raises ``RuleError`` (``bad_input``) when the clip is not stored."""
        from tasks.data.audio_files import model_flac, read_model_flac
        from tasks.loop.endpoints.base import audio_messages

        name = config["model_inputs"][0]
        value = model_input.get(name)
        if isinstance(value, np.ndarray):
            return audio_messages(model_flac(value))
        try:
            return audio_messages(read_model_flac(value))
        except FileNotFoundError as missing:
            raise RuleError(ModelCheckCode.BAD_INPUT, f"The clip to transcribe is missing: {missing}.", field=name) from None

    def endpoint_answer(self, config, text, model_input):
        return {"transcript": (text or "").strip()}

    def head_class(self):
        # The loader of CTC and Whisper models lives with the audio predictors; it is named by its
        # dotted path, as ``predictor_class`` is, so that a kind never imports the models in the loop.
        from django.utils.module_loading import import_string

        return import_string("tasks.loop.audio.SpeechHead")

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return {**modeling_auto.MODEL_FOR_CTC_MAPPING_NAMES, "whisper": "WhisperForConditionalGeneration"}

    def head_kwargs(self, labels):
        return {}

    def check_model_config(self, hf_config, task):
        """A transcriber has no labels to match."""
        return None

    def load_processor(self, path):
        """The directory's processor: feature extractor plus tokenizer (``AutoProcessor``), never remote code."""
        from transformers import AutoProcessor

        return AutoProcessor.from_pretrained(path, local_files_only=True, trust_remote_code=False)

    def training_defaults(self, config):
        return {"epochs": 4, "batch_size": 8, "learning_rate": 1e-4, "max_length": 128}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """Training a speech model on collected examples is not offered."""
        raise RuleError(ModelCheckCode.BAD_INPUT, "Training is not available for speech recognition tasks.")
