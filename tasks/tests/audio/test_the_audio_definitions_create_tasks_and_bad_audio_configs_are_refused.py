"""The built-in audio definitions (``spoken-commands.json``: audio classification; ``spoken-sentences.json``:
speech recognition) pass the config checks and create their tasks with round 1 open; an audio config
that feeds the model something other than its one audio field, names another fooled rule or another
metric is refused naming the field at fault."""

import copy
import json
from pathlib import Path

from tasks.data.seed import create_task
from tasks.kinds.config import validate_task_config

DEFINITIONS = Path(__file__).resolve().parents[2] / "data" / "task_definitions"
COMMANDS = json.loads((DEFINITIONS / "spoken-commands.json").read_text(encoding="utf-8"))
SENTENCES = json.loads((DEFINITIONS / "spoken-sentences.json").read_text(encoding="utf-8"))


def _errors(definition, **changes):
    config = copy.deepcopy(definition["config"])
    config.update(changes)
    return " | ".join(validate_task_config(config, kind=definition["kind"]))


def test_both_definitions_are_valid_and_create_their_tasks(db):
    for definition, metrics in [(COMMANDS, ("accuracy", "macro_f1")), (SENTENCES, ("wer", "cer"))]:
        assert _errors(definition) == ""
        task, created = create_task(definition)
        assert created and task.spec.perf_metrics == metrics
        assert task.rounds.get(number=1).status == "open"


def test_bad_audio_configs_name_the_field_at_fault():
    text_clip = [{"name": "clip", "label": "Clip"}]
    for definition in (COMMANDS, SENTENCES):
        assert "config.model_inputs" in _errors(definition, context_fields=text_clip)
        assert "config.model_inputs" in _errors(definition, model_inputs=["note"])
    assert "config.model_wrong.rule" in _errors(SENTENCES, model_wrong={"rule": "label_differs"})
    assert "config.perf_metric" in _errors(SENTENCES, perf_metric="accuracy")
    assert "config.perf_metric" in _errors(COMMANDS, perf_metric="wer")
    assert "config.labels" in _errors({**COMMANDS, "config": {k: v for k, v in COMMANDS["config"].items() if k != "labels"}})
    assert "config.context_fields" in _errors(SENTENCES, context_fields=[{"name": "clip", "label": "Clip", "type": "video"}])
