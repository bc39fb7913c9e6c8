"""Checks that a Hugging Face model directory is safe to load and fits a task, before loading it.

Every model that reaches ``transformers`` goes through ``check_model_directory`` first: the
registry calls it before each load, the submission checks call it on uploaded archives once
they are unpacked, and training calls it on what it saved. Nothing here imports weights or
runs code from the directory: it reads file names and the two JSON configs only.

Rules (each refusal is a ``RuleError`` whose message says what to fix):

- weights are safetensors: ``model.safetensors``, or ``model.safetensors.index.json`` with
  every shard it lists present;
- no links (an archive must not point outside itself), no pickle-based file anywhere (``*.bin``, ``*.pt``, ``*.pth``, ``*.ckpt``, ``*.pkl``,
  ``*.pickle``), no Python file (``*.py``), no ``auto_map`` in ``config.json`` or
  ``tokenizer_config.json`` (custom code is never run: ``trust_remote_code`` stays off);
- ``config.json`` names a ``model_type`` this version of transformers knows and has a
  model class for the task kind, and an architecture that fits the task kind (``...ForSequenceClassification`` for classification,
  ``...ForQuestionAnswering`` for extractive QA);
- tokenizer files are present (``tokenizer.json``, or a vocabulary file of a known format);
- classification: the model's ``id2label`` names match the task's labels one to one
  (case-insensitive, the task's ``label_aliases`` allowed).
"""

import hashlib
import json
from pathlib import Path

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONNumberTooLarge, JSONRefused, loads_bounded


class ModelCheckCode:
    """Stable codes of the ``RuleError``s raised by the checks and the registry."""

    NOT_A_DIRECTORY = "model_not_a_directory"
    SYMLINK = "model_symlink"
    NO_SAFETENSORS = "model_no_safetensors"
    PICKLE_FILE = "model_pickle_file"
    CUSTOM_CODE = "model_custom_code"
    BAD_CONFIG = "model_bad_config"
    UNKNOWN_MODEL_TYPE = "model_unknown_type"
    WRONG_ARCHITECTURE = "model_wrong_architecture"
    NO_TOKENIZER = "model_no_tokenizer"
    LABEL_MISMATCH = "model_label_mismatch"
    WRONG_KIND = "model_wrong_kind"
    LOAD_FAILED = "model_load_failed"
    BAD_INPUT = "model_bad_input"


PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
CODE_SUFFIXES = (".py", ".pyc", ".so")
# A fast tokenizer file, or a vocabulary that transformers converts to one (WordPiece, BPE, SentencePiece).
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
#: Files a Hugging Face directory needs to run (besides every ``*.safetensors``): an uploaded archive
#: keeps these and drops the rest (optimizer states, logs, data), so they never take disk space.
MODEL_FILES = (
    "config.json", "generation_config.json", "model.safetensors.index.json", "tokenizer_config.json",
    "special_tokens_map.json", "added_tokens.json", "merges.txt", "README.md", "preprocessor_config.json",
    "processor_config.json",  # a multimodal processor (image processor + tokenizer, e.g. ViLT's) in transformers 5
    *TOKENIZER_FILES,
)


def is_model_file(name: str) -> bool:
    """True when the archive member ``name`` (a relative POSIX path) is a file the model uses to run:
    weights (``*.safetensors``) or one of ``MODEL_FILES``, at the top of the model folder or one level down."""
    parts = name.split("/")
    if len(parts) > 2 or any(p.startswith("__MACOSX") for p in parts):
        return False
    base = parts[-1]
    return base.endswith(".safetensors") or base in MODEL_FILES


MAX_CONFIG_BYTES = 1024 * 1024


def _refuse(code: str, message: str):
    raise RuleError(code, message, field="model")


#: Digits an integer of a model's JSON files may have: transformers writes ``model_max_length``
#: as ``int(1e30)`` (31 digits) when a tokenizer has no limit; anything longer is refused unread.
MAX_CONFIG_INT_DIGITS = 40


def _config_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_CONFIG_INT_DIGITS:
        raise JSONNumberTooLarge(text, digits=MAX_CONFIG_INT_DIGITS)
    return int(text)


def loads_model_json(text: str):
    """A model file's JSON text read within the platform's bounds (``dynabench.jsonbounds.loads_bounded``:
    depth, NUL, lone surrogates), integers up to ``MAX_CONFIG_INT_DIGITS`` digits (transformers writes
    ``model_max_length = int(1e30)``). Raises ``json.JSONDecodeError`` or ``JSONRefused`` (both ``ValueError``)."""
    return loads_bounded(text, parse_int=_config_int)


def _read_json(path: Path, what: str) -> dict:
    if path.stat().st_size > MAX_CONFIG_BYTES:
        _refuse(ModelCheckCode.BAD_CONFIG, f"{what} is larger than 1 MiB; it should be a small JSON file.")
    try:
        data = loads_model_json(path.read_text(encoding="utf-8"))
    except JSONRefused as error:  # too deep, a number past 64 bits, NUL or a lone surrogate
        _refuse(ModelCheckCode.BAD_CONFIG, f"{what} is refused: {error}; a model config is a shallow JSON object.")
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        _refuse(ModelCheckCode.BAD_CONFIG, f"{what} is not valid JSON ({error}); save it again with save_pretrained().")
    if not isinstance(data, dict):
        _refuse(ModelCheckCode.BAD_CONFIG, f"{what} must hold a JSON object.")
    return data


def model_config(path) -> dict | None:
    """Return the parsed ``config.json`` of the model directory ``path``, or None when the directory
    has none (a model still training or unpacking). Raises ``RuleError`` (``bad_config``) for a file
    that is too large, too deep or not a JSON object."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return None
    return _read_json(config, "config.json")


def _check_files(path: Path, processor_files=TOKENIZER_FILES) -> None:
    links = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_symlink())
    if links:
        _refuse(
            ModelCheckCode.SYMLINK,
            f"Links are not allowed inside a model directory: replace {', '.join(links)} with the files themselves.",
        )
    names = [p for p in path.rglob("*") if p.is_file()]
    pickles = sorted(str(p.relative_to(path)) for p in names if p.name.lower().endswith(PICKLE_SUFFIXES))
    if pickles:
        _refuse(
            ModelCheckCode.PICKLE_FILE,
            f"Pickle-based files are never loaded: remove {', '.join(pickles)} and ship the weights as "
            "model.safetensors (save_pretrained(..., safe_serialization=True)).",
        )
    code = sorted(str(p.relative_to(path)) for p in names if p.name.lower().endswith(CODE_SUFFIXES))
    if code:
        _refuse(
            ModelCheckCode.CUSTOM_CODE,
            f"Custom code is never run: remove {', '.join(code)}; use an architecture built into transformers.",
        )
    if not (path / "model.safetensors").is_file():
        index = path / "model.safetensors.index.json"
        if not index.is_file():
            _refuse(
                ModelCheckCode.NO_SAFETENSORS,
                "No model.safetensors (or model.safetensors.index.json for sharded weights) in the directory; "
                "save the model with save_pretrained(..., safe_serialization=True).",
            )
        shards = sorted(set(_read_json(index, "model.safetensors.index.json").get("weight_map", {}).values()))
        if not shards:
            _refuse(ModelCheckCode.NO_SAFETENSORS, "model.safetensors.index.json has an empty weight_map.")
        for shard in shards:
            shard_path = (path / shard).resolve()
            if not shard.endswith(".safetensors") or shard_path.parent != path.resolve() or not shard_path.is_file():
                _refuse(
                    ModelCheckCode.NO_SAFETENSORS,
                    f"model.safetensors.index.json lists the shard '{shard}', which is not a .safetensors file "
                    "next to it; ship every shard.",
                )
    if not any((path / name).is_file() for name in processor_files):
        _refuse(
            ModelCheckCode.NO_TOKENIZER,
            f"No tokenizer, image processor or feature extractor files: add the one saved with save_pretrained() "
            f"(one of {', '.join(processor_files)}).",
        )


def _check_config(config: dict, *, spec) -> None:
    from transformers import CONFIG_MAPPING

    if "auto_map" in config:
        _refuse(
            ModelCheckCode.CUSTOM_CODE,
            "config.json has an 'auto_map' entry, which asks for custom code; remote code is never run. "
            "Remove 'auto_map' and use an architecture built into transformers.",
        )
    model_type = config.get("model_type")
    if not model_type or model_type not in CONFIG_MAPPING:
        _refuse(
            ModelCheckCode.UNKNOWN_MODEL_TYPE,
            f"config.json has model_type {model_type!r}, which transformers does not know; use a built-in "
            "model type such as 'bert', 'roberta', 'deberta-v2' or 'distilbert'.",
        )
    kind, suffixes = spec.name, spec.architecture_suffix
    suffixes = (suffixes,) if isinstance(suffixes, str) else tuple(suffixes)
    suffix = " or *".join(suffixes)
    if model_type not in spec.head_mapping_names():
        _refuse(
            ModelCheckCode.WRONG_ARCHITECTURE,
            f"transformers has no *{suffix} model for model_type '{model_type}'; a {kind} task needs one.",
        )
    architectures = config.get("architectures") or []
    if not isinstance(architectures, list) or not any(str(a).endswith(suffixes) for a in architectures):
        _refuse(
            ModelCheckCode.WRONG_ARCHITECTURE,
            f"config.json lists architectures {architectures or '(none)'}, but a {kind} task needs a "
            f"*{suffix} model (e.g. AutoModel{suffixes[0]}.from_pretrained(...) then save_pretrained()).",
        )


def match_labels(id2label: dict, task) -> list[str]:
    """Return the task label of each model output index, in index order.

    ``id2label`` is the model config's mapping (keys may be strings, as in ``config.json``).
    Names match case-insensitively, directly or through the task's ``label_aliases``.
    Raises ``RuleError`` (``model_label_mismatch``) listing both label sets when the model's
    labels are not exactly the task's labels (generic ``LABEL_0`` names never match).
    """
    task_labels = task.labels
    by_name = {label.lower(): label for label in task_labels}
    for alias, label in task.config.get("label_aliases", {}).items():
        by_name.setdefault(str(alias).strip().lower(), label)
    try:
        model_labels = [str(id2label[key]) for key in sorted(id2label, key=int)]
        indices_ok = sorted(int(k) for k in id2label) == list(range(len(id2label)))
    except (TypeError, ValueError):
        model_labels, indices_ok = [str(v) for v in dict(id2label).values()], False
    mapped = [by_name.get(name.strip().lower()) for name in model_labels]
    if not indices_ok or None in mapped or sorted(mapped) != sorted(task_labels):
        _refuse(
            ModelCheckCode.LABEL_MISMATCH,
            f"The model's labels {model_labels} do not match the task's labels {task_labels}. "
            "Set id2label/label2id in config.json to the task's label names (one output per label).",
        )
    return mapped


def check_model_directory(path, *, task) -> dict:
    """Check the directory ``path`` against the rules above for ``task``; return its parsed config.json.

    Raises ``RuleError`` (codes in ``ModelCheckCode``, ``field="model"``) naming what to fix.
    """
    path = Path(path)
    if not path.is_dir():
        _refuse(ModelCheckCode.NOT_A_DIRECTORY, f"The model path '{path}' is not a directory.")
    _check_files(path, task.spec.processor_files)
    if not (path / "config.json").is_file():
        _refuse(ModelCheckCode.BAD_CONFIG, "No config.json in the directory; save the model with save_pretrained().")
    config = _read_json(path / "config.json", "config.json")
    _check_config(config, spec=task.spec)
    if (path / "tokenizer_config.json").is_file():
        if "auto_map" in _read_json(path / "tokenizer_config.json", "tokenizer_config.json"):
            _refuse(
                ModelCheckCode.CUSTOM_CODE,
                "tokenizer_config.json has an 'auto_map' entry, which asks for custom tokenizer code; remove it.",
            )
    task.spec.check_model_config(config, task)
    return config


def directory_checksum(path) -> str:
    """Return the sha256 (hex) of a model directory: every file's relative path and bytes, in path order.

    Stored as ``MLModel.checksum``; the registry keys its cache on it, so a changed artefact reloads.
    """
    path = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()
