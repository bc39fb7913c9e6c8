"""A Hugging Face seq2seq directory submitted to a generation task passes the same safetensors-only
checks as any model and is evaluated with ``generate``; remote code or pickle weights are refused."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dynabench.errors import RuleError
from leaderboard.models import EvaluationRun
from leaderboard.services import submit_model_archive
from leaderboard.tests.conftest import evaluate_now, zip_directory
from tasks.models import MLModel, Task
from tasks.loop.registry import load_predictor
from tests.tiny_models import build_tiny_seq2seq_model
from tests.upload_support import submit_unpacked

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "flores-mini.json"
ITEMS = [("fr-1", "the museum opened in 1921", "le musée a ouvert en 1921"),
         ("fr-2", "the food was great", "la nourriture était excellente"),
         ("fr-3", "the room was dirty", "la chambre était sale")]


@pytest.fixture(scope="module")
def seq2seq_dir(tmp_path_factory):
    return build_tiny_seq2seq_model(tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture
def task(db, tmp_path):
    call_command("create_task", str(DEFINITION))
    data = tmp_path / "devtest.jsonl"
    data.write_text("".join(json.dumps({"uid": u, "language_pair": "eng_Latn-fra_Latn", "source": s, "references": [r]}) + "\n"
                            for u, s, r in ITEMS), encoding="utf-8")
    call_command("import_dataset", "flores-mini", "flores-mini-devtest", str(data), "--tag", "language_pair",
                 "--map", "language_pair=language_pair", "--no-progress")
    task = Task.objects.get(code="flores-mini")
    task.config = {**task.config, "max_new_tokens": 8}  # an untrained decoder never stops: keep generate short
    task.save()
    return task


def test_it_is_evaluated_with_generate(task, researcher, seq2seq_dir, settings):
    outputs = load_predictor(seq2seq_dir, task=task).predict([{"source": s} for _, s, _ in ITEMS])
    assert [set(o) for o in outputs] == [{"translation"}] * 3 and all(isinstance(o["translation"], str) for o in outputs)

    model = submit_unpacked(user=researcher, task=task, upload=zip_directory(seq2seq_dir), name="tiny-t5")
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done", run.error
    assert set(run.metrics) >= {"bleu", "chrfpp", "n"} and run.metrics["n"] == 3
    assert run.metric_signatures["chrfpp"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2")
    assert run.throughput and run.memory_gib
    stored = Path(settings.MEDIA_ROOT) / run.predictions_file
    assert [json.loads(line)["prediction"]["translation"] for line in stored.read_text().splitlines()] == [o["translation"] for o in outputs]


@pytest.mark.parametrize("extra, code", [
    ({"model/pytorch_model.bin": b"\x80\x04pickle"}, "pickle_weights"),
    ({"model/modeling_evil.py": b"import os"}, None),
])
def test_remote_code_or_pickle_weights_are_refused(task, researcher, seq2seq_dir, extra, code):
    with pytest.raises(RuleError) as info:
        submit_model_archive(user=researcher, task=task, upload=zip_directory(seq2seq_dir, extra=extra), name="bad-t5")
    if code:
        assert info.value.code == code
    assert "never" in info.value.message or "not allowed" in info.value.message or "Custom code" in info.value.message
    assert not MLModel.objects.filter(task=task).exists()


def test_a_config_that_asks_for_custom_code_is_refused(task, researcher, seq2seq_dir, tmp_path):
    import shutil

    copy = tmp_path / "t5-auto-map"
    shutil.copytree(seq2seq_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "auto_map": {"AutoModelForSeq2SeqLM": "evil.Model"}}))
    model = submit_unpacked(user=researcher, task=task, upload=zip_directory(copy), name="auto-map-t5")
    assert model.status == "failed"  # the config is read by the unpacking job, not the request
    assert "remote code is never run" in model.failure_reason


def test_a_classifier_is_not_a_generation_model(task, researcher, tiny_classifier_dir):
    model = submit_unpacked(user=researcher, task=task, upload=zip_directory(tiny_classifier_dir), name="not-t5")
    assert model.status == "failed"
    assert "ForConditionalGeneration" in model.failure_reason
