"""``manage.py ensure_default_models --inline``: the default models of every default task, trained once,
the model in the loop of round 1 put there."""

import shutil
from pathlib import Path

from django.core.management import call_command

from tasks.models import MLModel, Task
from tasks.data.seed import DEFAULT_TASK_CODES
from tasks.loop.training.default_models import BASELINE_MODEL_NAME, DEFAULT_MODEL_NAME, DEFAULT_MODELS


def test_it_trains_every_default_model_and_puts_the_seed_model_in_the_loop(db, tiny_encoder, models_dir):
    summary = call_command("ensure_default_models", "--inline", "--epochs", "1")

    assert summary.startswith("Default models: trained 8 (nli/minilm-seed, qa/minilm-seed, sentiment/minilm-seed, "
                              "hate-speech/minilm-seed, nli/minilm-few, ")
    assert "0 already present; put in the loop of round 1: nli, qa, sentiment, hate-speech" in summary
    for code in DEFAULT_TASK_CODES:
        task = Task.objects.get(code=code)
        for entry in DEFAULT_MODELS:
            model = MLModel.objects.get(task=task, name=entry.name)
            assert model.status == MLModel.Status.UPLOADED and model.published
            assert Path(model.path) == models_dir / code / entry.name
        assert list(task.rounds.get(number=1).target_models.values_list("name", flat=True)) == [DEFAULT_MODEL_NAME]


def test_the_baseline_learns_from_far_fewer_examples_than_the_seed_model(db, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--inline", "--epochs", "1")

    for code in DEFAULT_TASK_CODES:
        full = MLModel.objects.get(task__code=code, name=DEFAULT_MODEL_NAME).training_info["examples"]
        few = MLModel.objects.get(task__code=code, name=BASELINE_MODEL_NAME).training_info["examples"]
        assert 12 <= few <= full / 5, (code, few, full)


def test_a_second_run_does_nothing_and_says_so(db, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--inline", "--epochs", "1")
    checksums = dict(MLModel.objects.values_list("pk", "checksum"))

    summary = call_command("ensure_default_models", "--inline", "--epochs", "1")

    assert summary == "Nothing to do: the 8 default models are present and intact."
    assert dict(MLModel.objects.values_list("pk", "checksum")) == checksums


def test_it_retrains_a_default_model_whose_files_are_gone_into_the_same_record(db, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--inline", "--epochs", "1")
    nli = MLModel.objects.get(task__code="nli", name=DEFAULT_MODEL_NAME)
    shutil.rmtree(nli.path)

    summary = call_command("ensure_default_models", "--inline", "--epochs", "1")

    assert summary.startswith("Default models: trained 1 (nli/minilm-seed); 7 already present")
    nli.refresh_from_db()
    assert nli.status == MLModel.Status.UPLOADED and (Path(nli.path) / "model.safetensors").is_file()
    assert MLModel.objects.filter(task__code="nli").count() == 2


def test_it_keeps_an_owner_s_choice_of_models_in_the_loop(default_tasks, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--inline", "--epochs", "1")
    sentiment = default_tasks["sentiment"]
    other = MLModel.objects.create(task=sentiment, name="owner-choice", path="x")
    round1 = sentiment.rounds.get(number=1)
    round1.target_models.set([other])

    call_command("ensure_default_models", "--inline", "--epochs", "1")

    assert list(round1.target_models.all()) == [other]
