"""The task-kind protocol and registry: ``TaskKindSpec``, target errors, shared helpers, ``register``, ``get_spec``."""

from __future__ import annotations

import dataclasses
import re
import string

import numpy as np

from dynabench.errors import RuleError
from tasks.kinds.assist import AssistantPrompts
from tasks.kinds.judge import JudgePrompts
from tasks.kinds.release import ReleaseSchema
from tasks.kinds.written import WrittenText


class TargetError(ValueError):
    """A target read from a file (import, training data) does not fit the task; ``str()`` says why."""


class OutOfTaskTarget(TargetError):
    """A well-formed target that is not one of the task's (a label the task does not have).

    A training file may hold more classes than the task (DynaSent's ``mixed``): training skips
    such rows and counts them under ``skip_reason``; an import refuses them.
    """

    def __init__(self, message: str, *, skip_reason: str):
        super().__init__(message)
        self.skip_reason = skip_reason


def normalise_label(config: dict, value) -> str | None:
    """Return the task label for ``value`` (a label or one of its aliases), or None if unknown."""
    if value is None:
        return None
    value = str(value).strip()
    labels = config.get("labels", [])
    if value in labels:
        return value
    return config.get("label_aliases", {}).get(value)


def first_label_in(config: dict, text: str) -> str | None:
    """Return the task label (or the label of an alias) named earliest in ``text`` as a whole word,
    case-insensitive; None when it names none. At one position the longer name wins."""
    names = [(label, label) for label in config.get("labels", [])]
    names += list(config.get("label_aliases", {}).items())
    best = None
    for name, label in names:
        match = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text or "", flags=re.IGNORECASE)
        if match and (best is None or (match.start(), -len(name)) < best[0]):
            best = ((match.start(), -len(name)), label)
    return best[1] if best else None


def span_at(passage: str, *, text, start) -> bool:
    """Return True when ``text`` is non-empty and exactly ``passage[start:start + len(text)]``.

    The one span check of the platform (annotation, validation corrections, imports, training
    data). ``start`` must be a whole number ≥ 0 (not a bool); anything else is False.
    """
    return (
        isinstance(text, str) and bool(text) and isinstance(start, int) and not isinstance(start, bool)
        and start >= 0 and passage[start:start + len(text)] == text
    )


@dataclasses.dataclass
class ItemScores:
    """Per-item scores of a model on a dataset, as the spec computes them.

    ``per_item``: one score per item, written to the predictions file under the spec's
    ``score_key`` (a bool for classification, SQuAD F1 in [0, 1] for QA). ``item_results``:
    the array stored on an evaluation run for paired bootstrap intervals (2 × n label codes,
    gold then predicted, or n F1 values). ``metrics(rows)``: the metrics dict of
    the rows given (all rows when None), with ``n``.
    """

    per_item: list
    item_results: np.ndarray
    _metrics: object
    signatures: dict = dataclasses.field(default_factory=dict)
    """``{metric: signature string}`` of metrics computed by a library that has one (sacreBLEU),
    stored on the evaluation run (``EvaluationRun.metric_signatures``); empty otherwise."""

    def metrics(self, rows: list[int] | None = None) -> dict:
        return self._metrics(rows)


class TaskKindSpec(AssistantPrompts, JudgePrompts, ReleaseSchema, WrittenText):
    """Base class of a task kind. Subclasses set the class attributes and implement the methods.

    Methods take the task's ``config`` (a dict, ``Task.config``), not the ``Task``: no database needed.
    """

    name: str = ""
    """The stored ``Task.kind`` value."""
    display_name: str = ""
    has_labels: bool = False
    """True when the annotator picks a label (templates show label choices); False: a span."""
    target_field: str = ""
    """The key of the target in ``Example.target``, ``DatasetItem.target`` and import files."""
    prediction_field: str = ""
    """The key of the model's answer in its output and in a predictions file line."""
    score_key: str = ""
    """The key of the per-item score in an evaluation's predictions file."""
    correction_field: str = ""
    """The validator's correction field in ``Validation.metadata``."""
    architecture_suffix: str | tuple[str, ...] = ""
    """The transformers architecture suffix a submitted model must have (a tuple: one of them)."""
    predictor_class: str = ""
    """Dotted path of the registry's predictor class (has a ``for_task`` constructor)."""
    config_properties: dict = {}
    """JSON Schema properties of the config keys only this kind has."""
    model_wrong_rule: str = ""
    """The ``config["model_wrong"]["rule"]`` a task of this kind must name."""
    perf_metrics: tuple[str, ...] = ()
    """The metrics ``score`` returns that a config may name as ``perf_metric``."""
    lower_is_better: tuple[str, ...] = ()
    """The ``perf_metrics`` that are error rates (WER, CER): lower is better; all others: higher."""
    collects_without_model: bool = False
    """True when a round may collect with no model in the loop (``tasks.services.open_round``); no kind does."""
    submissions: tuple[str, ...] = ("model", "predictions", "endpoint")
    """What participants submit: ``model`` (a Hugging Face directory), ``predictions`` (a predictions file) and/or ``selection`` (pool uids the platform trains its fixed recipe on, ``DataCentricSpec``)."""
    takes_endpoints: bool = True
    """True when a model behind an OpenAI-compatible endpoint can answer this kind (``tasks/loop/endpoints/``):
    the spec turns the model input into messages (``endpoint_messages``) and the text of the answer into
    the kind's output (``endpoint_answer``, by the rule ``endpoint_answer_rule`` states)."""
    endpoint_answer_rule: str = ""
    """How the text of an endpoint's answer becomes this kind's output, in words (shown to owners)."""
    endpoint_apis: tuple[str, ...] = ("chat", "completions")
    """The endpoint APIs (``Endpoint.Api``) that can carry this kind's input (only ``chat`` for images)."""
    generates_images: bool = False
    """True when the model in the loop is an image generator whose images the annotator judges
    (``text_to_image.py``): the create page is ``annotation/t2i_views.py``'s."""
    measures_transfer: bool = True
    """``model_wrong`` is a rule on any model's output, so a validated example can be put to the task's other models (``validation/transfer.py``)."""
    conversational: bool = False
    """True when annotators talk with the model (streamed turns, then a judgment: ``annotation/chat.py``)."""

    def answers_wanted(self, config: dict) -> int:
        """How many answers (the annotator's, then validators' own) an example's target may hold; 0: none."""
        return 0

    def checked_item_fields(self, config: dict) -> list[str]:
        """Fields of an item's input that a predictions-file line may repeat and must then match (a generation item's language pair)."""
        return []

    # --- config ---------------------------------------------------------------------------

    def config_errors(self, config: dict) -> list[str]:
        """Return messages (each naming the config field at fault) for rules between fields of this kind."""
        raise NotImplementedError

    # --- model input -----------------------------------------------------------------------

    def passage_field(self, config: dict) -> str | None:
        """The field holding the passage the answer is a span of, or None (no passage)."""
        return None

    def passage_of(self, config: dict, example_input: dict, context_data: dict | None = None) -> str | None:
        """Return the passage of an example (its input, else its context), or None when the kind has none."""
        name = self.passage_field(config)
        if name is None:
            return None
        return example_input.get(name) or (context_data or {}).get(name) or ""

    def model_input(self, config: dict, record: dict | None) -> dict:
        """Return ``{field: text}`` for each of ``config["model_inputs"]`` from an example's or an item's input."""
        record = record or {}
        return {name: record.get(name, "") for name in config["model_inputs"]}

    perturbations: str = "text"
    """How the leaderboard measures robustness and fairness (``leaderboard/scoring.py``): ``text`` perturbations of ``perturbable_fields``, or ``audio`` (noise, speed; speaker groups)."""

    def perturbable_fields(self, config: dict) -> list[str]:
        """The model inputs that the ``text`` perturbations of robustness and fairness may rewrite."""
        return list(config["model_inputs"])

    # --- the target ------------------------------------------------------------------------

    def clean_target(self, config: dict, example_input: dict, target) -> dict:
        """Return the annotator's target in its stored shape, or raise ``RuleError`` saying what to fix."""
        raise NotImplementedError

    def import_target(self, config: dict, raw, inputs: dict, *, source: str) -> dict:
        """Return the stored target from a file's raw value (``source`` names the file field); raise ``TargetError``."""
        raise NotImplementedError

    def target_from_row(self, config: dict, row: dict, inputs: dict) -> tuple[dict | None, str | None]:
        """Return ``(target, None)`` from a stored row (``Example.target`` keys), or ``(None, reason)`` when it no longer fits."""
        raise NotImplementedError

    def form_fields(self, config: dict, *, optional_label: bool = False) -> dict:
        """Return the Django form fields for the target (name → field)."""
        raise NotImplementedError

    def target_from_form(self, cleaned: dict, *, optional: bool = False) -> dict | None:
        """Return the target from a form's ``cleaned_data`` (None when ``optional`` and empty)."""
        raise NotImplementedError

    def form_initial(self, target: dict) -> dict:
        """Return a form's initial values that redisplay ``target``."""
        raise NotImplementedError

    # --- the model-wrong rule ----------------------------------------------------------------

    def model_wrong(self, config: dict, target: dict, model_output: dict) -> bool:
        """Return True when ``model_output`` is wrong for ``target`` (the example fooled the model)."""
        raise NotImplementedError

    def answer_matches(self, config: dict, gold: dict, answer: dict) -> bool:
        """Return True when a person's ``answer`` (a cleaned target, ``clean_target``'s shape) agrees
        with the ``gold`` target: a qualification quiz item answered right."""
        raise NotImplementedError

    def quiz_form_fields(self, config: dict) -> dict:
        """The Django form fields of one quiz answer (default: the create form's target fields)."""
        return self.form_fields(config)

    def quiz_target(self, config: dict, item_input: dict, cleaned: dict) -> dict | None:
        """The raw target of one quiz answer from the quiz form's ``cleaned`` values (default:
        ``target_from_form``); ``clean_target`` checks it afterwards."""
        return self.target_from_form(cleaned, optional=True)

    # --- display ------------------------------------------------------------------------------

    def answer_display(self, config: dict, example_input: dict, target: dict | None, output: dict) -> dict:
        """Template context that draws the model's answer next to the annotator's (if any)."""
        raise NotImplementedError

    # --- evaluation ---------------------------------------------------------------------------

    def parse_prediction(self, config: dict, value) -> tuple[object, tuple[str, str] | None]:
        """Return ``(value, None)`` for a predictions-file value (normalised), or ``(None, (problem, detail))``:
        the problem heading the file's report groups lines under, and what to show after the line number
        (empty: nothing)."""
        raise NotImplementedError

    def score(self, config: dict, items: list[dict], outputs: list[dict]) -> ItemScores:
        """Score model ``outputs`` against dataset ``items`` (dicts with ``uid`` and ``target``)."""
        raise NotImplementedError

    def consistency(self, config: dict, original: list[dict], perturbed: list[dict]) -> float:
        """The perf metric of ``perturbed`` outputs measured against the ``original`` outputs, in [0, 1]."""
        raise NotImplementedError

    # --- models behind endpoints --------------------------------------------------------------

    def endpoint_prompt(self, config: dict) -> dict:
        """The default prompt template for an endpoint model: ``{"system": str, "user": str}``, with
        ``$field`` placeholders for the model inputs (``$labels`` in the system prompt: the task's labels)."""
        return {
            "system": "Answer the request below.",
            "user": "\n".join(f"{name}: ${name}" for name in config["model_inputs"]),
        }

    def endpoint_messages(self, config: dict, model_input: dict, prompt: dict | None = None) -> list[dict]:
        """The chat messages for one model input: the kind's template (``endpoint_prompt``) with the
        record's overrides ``prompt`` (keys ``system``/``user``), filled by ``string.Template`` (the
        input's text is substituted once, never read as a template itself). Only the model inputs are
        sent: no target ever reaches an endpoint."""
        template = {**self.endpoint_prompt(config), **{k: v for k, v in (prompt or {}).items() if k in ("system", "user")}}
        values = {name: str(model_input.get(name, "")) for name in config["model_inputs"]}
        values["labels"] = ", ".join(config.get("labels", []))
        messages = []
        system = string.Template(template["system"]).safe_substitute(values).strip()
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": string.Template(template["user"]).safe_substitute(values)})
        return messages

    def endpoint_answer(self, config: dict, text: str, model_input: dict) -> dict:
        """The kind's model output (the registry's shape) from the text of an endpoint's answer."""
        raise NotImplementedError

    # --- people's judgments of generative answers (``open_ended.py``); other kinds have none ---

    def battle(self, config: dict, target: dict, output: dict) -> tuple[int, int, str] | None:
        """``(model id of A, model id of B, "a"|"b"|"tie")`` when the example is a pairwise judgment, else None."""
        return None

    def answering_models(self, config: dict, output: dict) -> list[int]:
        """Ids of the models whose answers a person judged in this example (the generative vMER's denominator)."""
        return []

    def judged_failures(self, config: dict, target: dict, output: dict) -> list[tuple[int, str]]:
        """``[(model id, failure category)]`` that the judgment ``target`` marks failing."""
        return []

    def export_records(self, config: dict, output: dict, target: dict) -> list[dict] | None:
        """Records of a judged example in the layouts training libraries read (``messages``,
        ``chosen``/``rejected``); None: the kind has none."""
        return None

    def clean_image_verdicts(self, config: dict, target: dict, output: dict, verdicts) -> dict:
        """A validator's per-image verdicts checked (``text_to_image.py``); other kinds take none."""
        raise RuleError("unknown_metadata", "This task's examples have no generated images to judge.", field="image_verdicts")

    def clean_image_categories(self, config: dict, verdicts: dict, categories) -> dict:
        """A validator's corrected harm categories of the images they judge unsafe (``text_to_image.py``); other kinds take none."""
        raise RuleError("unknown_metadata", "This task's examples have no generated images to judge.", field="image_categories")

    def validation_label(self, config: dict, target: dict, verdicts: dict | None, label: str) -> str:
        """The vote a validation counts as, given its per-image ``verdicts`` (default: ``label`` as given)."""
        return label

    # --- model head and training -------------------------------------------------------------

    def head_class(self):
        """The transformers Auto class of this kind's model head."""
        raise NotImplementedError

    def head_mapping_names(self) -> dict:
        """transformers' ``model_type → architecture`` names for this head."""
        raise NotImplementedError

    def head_kwargs(self, labels: list[str]) -> dict:
        """Keyword arguments for ``head_class().from_pretrained`` when a fresh head is put on an encoder."""
        raise NotImplementedError

    def check_model_config(self, hf_config: dict, task) -> list[str] | None:
        """Check a model's ``config.json`` against the task beyond its architecture; return the
        task label of each model output (None when the head has no labels). Raises ``RuleError``."""
        raise NotImplementedError

    def labels_out_of_reach(self, config: dict, hf_config: dict) -> list[str]:
        """Return the task labels (``config["labels"]``, in order) that a model with this
        ``config.json`` cannot output, so it could never predict them; ``[]`` for kinds without
        labels. Used to refuse a label change or a model in the loop that leaves a label unreachable."""
        return []

    def training_defaults(self, config: dict) -> dict:
        """Hyperparameter defaults (``tasks.loop.training.hyperparameters.Hyperparameters`` fields) for this kind."""
        raise NotImplementedError

    def training_features(self, tokenizer, examples, *, config: dict, labels: list[str], max_length: int, doc_stride: int) -> list[dict]:
        """Return tokenised training features (with their training targets) of ``examples``."""
        raise NotImplementedError

    def data_collator(self, tokenizer):
        """The collator that pads a batch of ``training_features`` (default: ``DataCollatorWithPadding``)."""
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer, return_tensors="pt")

    # --- the model's preprocessor (tokenizer or image processor) ---------------------------

    processor_files: tuple[str, ...] = (
        "tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model",
    )
    """Files of which a submitted model directory must hold one: its tokenizer (default) or its image processor's config."""
    processor_summary: str = "tokenizer files"  # what *Submit a model* asks an archive to hold besides config and weights

    def load_processor(self, path):
        """Load the model directory's preprocessor (default: its fast tokenizer, never remote code);
        raise ``RuleError`` (``model_no_tokenizer``) when there is no fast version."""
        from transformers import AutoTokenizer

        from tasks.loop.model_checks import ModelCheckCode

        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
        if not getattr(tokenizer, "is_fast", True) or not hasattr(tokenizer, "backend_tokenizer"):
            raise RuleError(
                ModelCheckCode.NO_TOKENIZER, "The tokenizer has no fast (tokenizers) version; add tokenizer.json.",
                field="model",
            )
        return tokenizer

    def training_pool(self, config: dict) -> str | None:
        """The name of the dataset participants select training items from (never evaluated), or None."""
        return None

    def selection_budget(self, config: dict) -> int | None:
        """The most pool items one selection may hold, or None (the kind takes no selections)."""
        return None


KINDS: dict[str, TaskKindSpec] = {}


def register(spec_class: type[TaskKindSpec]) -> type[TaskKindSpec]:
    """Class decorator: register one instance of ``spec_class`` under its ``name``."""
    KINDS[spec_class.name] = spec_class()
    return spec_class


def get_spec(kind: str) -> TaskKindSpec:
    """Return the spec of ``kind``; raise ``KeyError`` naming the known kinds for an unknown one."""
    try:
        return KINDS[kind]
    except KeyError:
        raise KeyError(f"unknown task kind {kind!r} (known: {', '.join(KINDS)})") from None


def kind_choices() -> list[tuple[str, str]]:
    """``[(name, display name)]`` of every registered kind, for ``Task.kind``."""
    return [(spec.name, spec.display_name) for spec in KINDS.values()]
