"""What a task kind means, in one place: one spec class per kind, reached as ``task.spec``.

Every other module asks the spec (``task.spec.<method>``) instead of branching on
``task.kind``; ``tasks/tests/test_no_kind_branches.py`` keeps it so. A spec owns, for its kind:

- the annotator's target: its field in ``Example.target`` / ``DatasetItem.target``
  (``target_field``), its form fields, its cleaning and validation (``clean_target``,
  ``import_target``, ``target_from_row``);
- the model input built from an example or a dataset item (``model_input``), and the QA
  passage taken in one way (``passage_field``: the second of ``model_inputs``);
- the fooled-the-model rule (``model_wrong``; DESIGN.md, "Model wrong");
- its metrics, the per-item score key and the predictions-file field (``score``,
  ``consistency``, ``score_key``, ``prediction_field``, ``parse_prediction``);
- the model head (``head_class``, ``architecture_suffix``, ``predictor_class``) used by the
  registry, training and the submission checks, and the training features;
- how an example and the model's answer are shown (``display_name``, ``has_labels``,
  ``answer_display``);
- its part of the task config's JSON Schema (``config_properties``) and the rules between
  config fields (``config_errors``);
- the columns of its dataset releases and their hub category (``release_columns``,
  ``release_task_category``; defaults in ``release.py``).

The package holds the protocol and registry (``base.py``) and one module per kind
(``classification.py``, ``extractive_qa.py``, ``generation.py``, ``data_centric.py``,
``open_ended.py``, ``image_classification.py``, ``visual_question_answering.py``, ``text_to_image.py``, ``audio_classification.py``,
``speech_recognition.py``;
``judged.py``: what the kinds judged by people share). Adding a
kind is one module with one subclass of ``TaskKindSpec`` registered with ``@register``,
imported below (see ``docs/adding-a-task-kind.md``). The specs are stateless: one instance per
kind, shared. The names other apps use are re-exported here, so callers write
``from tasks.kinds import get_spec``.
"""


from tasks.kinds.base import (
    KINDS,
    ItemScores,
    OutOfTaskTarget,
    TargetError,
    TaskKindSpec,
    get_spec,
    kind_choices,
    normalise_label,
    register,
    span_at,
)
# Imported in registration order: Task.kind's choices (and so the migrations) follow it.
from tasks.kinds.classification import ClassificationSpec  # isort: skip
from tasks.kinds.extractive_qa import DEFAULT_QA_THRESHOLD, ExtractiveQASpec, qa_features  # isort: skip
from tasks.kinds.generation import DEFAULT_CHRF_THRESHOLD, GenerationSpec  # isort: skip
from tasks.kinds.data_centric import DataCentricSpec  # isort: skip
from tasks.kinds.open_ended import OpenEndedSpec  # isort: skip
from tasks.kinds.image_classification import ImageClassificationSpec  # isort: skip
from tasks.kinds.visual_question_answering import VisualQuestionAnsweringSpec  # isort: skip
from tasks.kinds.text_to_image import TextToImageSpec  # isort: skip
from tasks.kinds.audio_classification import AudioClassificationSpec  # isort: skip
from tasks.kinds.speech_recognition import DEFAULT_WER_THRESHOLD, SpeechRecognitionSpec  # isort: skip

__all__ = [
    "KINDS", "ItemScores", "OutOfTaskTarget", "TargetError", "TaskKindSpec", "get_spec", "kind_choices",
    "normalise_label", "register", "span_at", "ClassificationSpec", "DataCentricSpec", "DEFAULT_QA_THRESHOLD",
    "ExtractiveQASpec", "qa_features", "DEFAULT_CHRF_THRESHOLD", "GenerationSpec",
    "OpenEndedSpec", "ImageClassificationSpec", "VisualQuestionAnsweringSpec",
    "TextToImageSpec", "AudioClassificationSpec", "DEFAULT_WER_THRESHOLD", "SpeechRecognitionSpec",
]
