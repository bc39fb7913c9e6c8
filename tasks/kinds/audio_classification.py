"""The ``audio_classification`` kind: the context is a clip of audio (``tasks.data.audio``), the
annotator gives the label meant to fool the model (spoken commands: "yes", "no", "up", "down"); the
model is an in-process Hugging Face audio classifier (``AutoModelForAudioClassification`` and its
feature extractor, safetensors only, never remote code).

Targets, the model-wrong rule (the labels differ), the metrics (accuracy and macro-F1), the
predictions file and the leaderboard are classification's (``ClassificationSpec``): only the model
input (a clip's sha256, read from the storage and resampled to the model's rate by
``tasks.loop.audio.AudioClassificationPredictor``), the model head and its preprocessor differ.
"""

from __future__ import annotations

from dynabench.errors import RuleError
from tasks.data.audio_files import audio_context_fields
from tasks.kinds.base import register
from tasks.kinds.classification import ClassificationSpec
from tasks.loop.model_checks import ModelCheckCode

AUDIO_UPLOADS_PROPERTY = {
    "annotator_audio_uploads": {
        "type": "boolean",
        "description": "Annotators may upload or record their own clip as the context of an example.",
    },
}


def one_audio_input_errors(config: dict, kind: str) -> list[str]:
    """The config message when ``model_inputs`` is not exactly the task's one audio context field."""
    clips = audio_context_fields(config)
    if config.get("model_inputs") != clips[:1] or len(clips) != 1:
        return [
            f"config.model_inputs: a {kind} task feeds the model exactly one context field of type 'audio', "
            "and names it as its only model input"
        ]
    return []


@register
class AudioClassificationSpec(ClassificationSpec):
    """Audio classification: the context is one clip; the annotator picks one of the task's labels.

    Config: one context field of ``"type": "audio"`` (it holds the clip's sha256), named as the
    only ``model_inputs`` entry; ``labels``; ``model_wrong.rule`` ``label_differs``. Target
    ``{"label"}``, model output ``{"label", "probs"}``, metrics accuracy and macro-F1, as
    ``ClassificationSpec``. The model's ``config.json`` must name an audio-classification
    architecture (``*ForAudioClassification``, or ``*ForSequenceClassification`` of an audio
    model type such as ``wav2vec2``, ``hubert``, ``wavlm``). Robustness (``perturbations = "audio"``:
    noise, speed) is the perf metric of the labels on perturbed clips against the model's own labels
    on the originals (``ClassificationSpec.consistency``); fairness compares speaker groups.
    """

    name = "audio_classification"
    display_name = "Audio classification"
    release_task_category = "audio-classification"
    architecture_suffix = ("ForAudioClassification", "ForSequenceClassification")
    predictor_class = "tasks.loop.audio.AudioClassificationPredictor"
    processor_files = ("preprocessor_config.json",)
    processor_summary = "its feature extractor (<code>preprocessor_config.json</code>)"
    submissions = ("model", "predictions")
    takes_endpoints = False
    perturbations = "audio"
    config_properties = {**ClassificationSpec.config_properties, **AUDIO_UPLOADS_PROPERTY}

    def config_errors(self, config):
        return super().config_errors(config) + one_audio_input_errors(config, "audio classification")

    def head_class(self):
        from transformers import AutoModelForAudioClassification

        return AutoModelForAudioClassification

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES

    def load_processor(self, path):
        """The directory's feature extractor (``preprocessor_config.json``), never remote code."""
        from transformers import AutoFeatureExtractor

        return AutoFeatureExtractor.from_pretrained(path, local_files_only=True, trust_remote_code=False)

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """Training an audio model on collected examples is not offered."""
        raise RuleError(ModelCheckCode.BAD_INPUT, "Training is not available for audio classification tasks.")
