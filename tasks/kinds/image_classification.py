"""The ``image_classification`` kind: the context is an image (``tasks.data.images``), the annotator
gives the label meant to fool the model; the model is an in-process Hugging Face image classifier
(``AutoModelForImageClassification`` and its image processor, safetensors only, never remote code).

Targets, the model-wrong rule, the metrics (accuracy and macro-F1), the predictions file and the
leaderboard are classification's (``ClassificationSpec``): only the model input (an image's
sha256, read from the storage by ``tasks.loop.vision.ImageClassificationPredictor``), the model head
and its preprocessor differ.
"""

from __future__ import annotations

from dynabench.errors import RuleError
from tasks.kinds.base import register
from tasks.kinds.classification import ClassificationSpec
from tasks.loop.model_checks import ModelCheckCode


def image_fields(config: dict) -> list[str]:
    """The names of the config's context fields of ``"type": "image"`` (as ``tasks.data.images.image_context_fields``,
    which the kinds package does not import: it would load Pillow and the models)."""
    return [f["name"] for f in config.get("context_fields", []) if f.get("type") == "image"]


@register
class ImageClassificationSpec(ClassificationSpec):
    """Image classification: the context is one image; the annotator picks one of the task's labels.

    Config: one context field of ``"type": "image"`` (it holds the image's sha256), named as the
    only ``model_inputs`` entry; ``labels``; ``model_wrong.rule`` ``label_differs``. Target
    ``{"label"}``, model output ``{"label", "probs"}``, metrics accuracy and macro-F1, as
    ``ClassificationSpec``.
    """

    name = "image_classification"
    display_name = "Image classification"
    release_task_category = "image-classification"
    architecture_suffix = "ForImageClassification"
    predictor_class = "tasks.loop.vision.ImageClassificationPredictor"
    processor_files = ("preprocessor_config.json",)
    processor_summary = "its image processor (<code>preprocessor_config.json</code>)"
    submissions = ("model", "predictions")
    config_properties = {
        **ClassificationSpec.config_properties,
        "annotator_image_uploads": {
            "type": "boolean", "description": "Annotators may upload their own image as the context of an example.",
        },
    }

    def config_errors(self, config):
        errors = super().config_errors(config)
        images = image_fields(config)
        if config.get("model_inputs") != images[:1] or len(images) != 1:
            errors.append(
                "config.model_inputs: an image classification task feeds the model exactly one context field "
                "of type 'image', and names it as its only model input"
            )
        return errors

    def perturbable_fields(self, config):
        """None: the text perturbations of robustness and fairness do not apply to images."""
        return []

    def head_class(self):
        from transformers import AutoModelForImageClassification

        return AutoModelForImageClassification

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES

    def load_processor(self, path):
        """The directory's image processor (``preprocessor_config.json``), never remote code."""
        from transformers import AutoImageProcessor

        return AutoImageProcessor.from_pretrained(path, local_files_only=True, trust_remote_code=False)

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """Training an image model on collected examples is not offered (yet)."""
        raise RuleError(ModelCheckCode.BAD_INPUT, "Training is not available for image classification tasks.")
