"""The built-in visual question answering definition (``tasks/data/task_definitions/colours-vqa.json``)
passes the config checks and creates its task with round 1 open; a VQA config that feeds the model
something other than [its image field, the question], names another fooled rule or another metric
is refused naming the field at fault."""

import copy
import json

from tasks.kinds.config import validate_task_config
from tests.vqa_support import DEFINITION, vqa_task

CONFIG = json.loads(DEFINITION.read_text(encoding="utf-8"))["config"]


def test_the_definition_is_valid_and_creates_its_task(db):
    assert validate_task_config(CONFIG, kind="visual_question_answering") == []
    task = vqa_task()
    assert task.kind == "visual_question_answering" and task.spec.perf_metrics == ("vqa_accuracy",)
    assert task.rounds.get(number=1).status == "open"


def _errors(**changes):
    config = copy.deepcopy(CONFIG)
    config.update(changes)
    return " | ".join(validate_task_config(config, kind="visual_question_answering"))


def test_bad_vqa_configs_name_the_field_at_fault():
    assert "config.model_inputs" in _errors(model_inputs=["question", "image"])
    assert "config.model_inputs" in _errors(context_fields=[{"name": "image", "label": "Image"}])  # not of type image
    assert "config.model_wrong.rule" in _errors(model_wrong={"rule": "label_differs"})
    assert "config.perf_metric" in _errors(perf_metric="accuracy")
