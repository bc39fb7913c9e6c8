"""``manage.py ensure_default_models``: the four seed models, trained once, in the loop of round 1."""

import shutil
from pathlib import Path

from django.core.management import call_command

from tasks.models import MLModel, Task
from tasks.seed import DEFAULT_TASK_CODES
from tasks.training import DEFAULT_MODEL_NAME


def test_it_trains_the_four_default_models_and_puts_them_in_the_loop(db, tiny_encoder, models_dir):
    summary = call_command("ensure_default_models", "--epochs", "1")

    assert summary.startswith("Default models: trained 4 (nli, qa, sentiment, hate-speech), 0 already present")
    for code in DEFAULT_TASK_CODES:
        task = Task.objects.get(code=code)
        model = MLModel.objects.get(task=task, name=DEFAULT_MODEL_NAME)
        assert model.status == MLModel.Status.UPLOADED
        assert Path(model.path) == models_dir / code / DEFAULT_MODEL_NAME
        assert list(task.rounds.get(number=1).target_models.all()) == [model]


def test_a_second_run_does_nothing_and_says_so(db, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--epochs", "1")
    checksums = dict(MLModel.objects.values_list("pk", "checksum"))

    summary = call_command("ensure_default_models", "--epochs", "1")

    assert summary == "Nothing to do: the 4 default models are present and intact."
    assert dict(MLModel.objects.values_list("pk", "checksum")) == checksums


def test_it_retrains_a_default_model_whose_files_are_gone_into_the_same_record(db, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--epochs", "1")
    nli = MLModel.objects.get(task__code="nli", name=DEFAULT_MODEL_NAME)
    shutil.rmtree(nli.path)

    summary = call_command("ensure_default_models", "--epochs", "1")

    assert summary.startswith("Default models: trained 1 (nli), 3 already present")
    nli.refresh_from_db()
    assert nli.status == MLModel.Status.UPLOADED and (Path(nli.path) / "model.safetensors").is_file()
    assert MLModel.objects.filter(task__code="nli").count() == 1


def test_it_keeps_an_owner_s_choice_of_models_in_the_loop(default_tasks, tiny_encoder, models_dir):
    call_command("ensure_default_models", "--epochs", "1")
    sentiment = default_tasks["sentiment"]
    other = MLModel.objects.create(task=sentiment, name="owner-choice", path="x")
    round1 = sentiment.rounds.get(number=1)
    round1.target_models.set([other])

    call_command("ensure_default_models", "--epochs", "1")

    assert list(round1.target_models.all()) == [other]
