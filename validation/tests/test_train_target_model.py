"""``manage.py train_target_model``: fine-tune a head on the base encoder and register the model."""

import json

import pytest
from django.core.management import CommandError, call_command

from tasks.loop.model_checks import directory_checksum
from tasks.models import MLModel
from tasks.loop.registry import load_predictor

# Every test trains into a temporary MODELS_DIR, never into the checkout's var/models.
pytestmark = pytest.mark.usefixtures("models_dir")


def test_it_trains_on_the_seed_set_and_registers_an_uploaded_model(sentiment_task, tiny_encoder, models_dir):
    summary = call_command("train_target_model", "sentiment", "--epochs", "1", "--name", "seed-test")

    model = MLModel.objects.get(task=sentiment_task, name="seed-test")
    assert summary.startswith("Trained sentiment/seed-test")
    assert "seed 93" in summary
    assert model.status == MLModel.Status.UPLOADED
    assert model.progress == 1.0
    assert model.path == str(models_dir / "sentiment" / "seed-test")
    assert model.checksum == directory_checksum(model.path)
    assert model.training_info["data"][0] == {
        "source": "seed", "count": 93, "label_counts": {"negative": 32, "neutral": 28, "positive": 33},
        "file": "tasks/data/seed_data/sentiment.jsonl",
    }
    assert model.training_info["hyperparameters"]["epochs"] == 1
    assert model.training_info["base_encoder"]["name"] == "tiny-bert"


def test_the_saved_directory_is_a_hugging_face_model_with_the_task_labels(sentiment_task, tiny_encoder, models_dir):
    call_command("train_target_model", "sentiment", "--epochs", "1", "--name", "seed-test")
    path = models_dir / "sentiment" / "seed-test"

    config = json.loads((path / "config.json").read_text())
    assert config["id2label"] == {"0": "positive", "1": "negative", "2": "neutral"}
    assert config["label2id"] == {"positive": 0, "negative": 1, "neutral": 2}
    assert (path / "model.safetensors").is_file() and not list(path.glob("*.bin"))
    assert json.loads((path / "training_info.json").read_text())["examples"] == 93
    assert len((path / "training_examples.jsonl").read_text().splitlines()) == 93
    outputs = load_predictor(path, task=sentiment_task).predict([{"text": "The soup was cold."}])
    assert outputs[0]["label"] in {"positive", "negative", "neutral"}


def test_it_reads_a_data_file_through_a_field_map_and_skips_unusable_rows(sentiment_task, tiny_encoder, tmp_path):
    data = tmp_path / "dynasent-like.jsonl"
    rows = [
        {"text_id": "r1-1", "sentence": "Great tacos.", "gold_label": "positive"},
        {"text_id": "r1-2", "sentence": "Cold fries.", "gold_label": "negative"},
        {"text_id": "r1-3", "sentence": "It opens at nine.", "gold_label": "neutral"},
        {"text_id": "r1-4", "sentence": "Nice room, rude staff.", "gold_label": "mixed"},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))

    summary = call_command(
        "train_target_model", "sentiment", "--data", str(data), "--map", "text=sentence", "--map", "label=gold_label",
        "--uid", "text_id", "--epochs", "1", "--name", "from-file",
    )

    model = MLModel.objects.get(name="from-file")
    assert "on 3 examples (file 3)" in summary
    assert "skipped 1 rows (label 'mixed' not in task labels: 1)" in summary
    file_source = model.training_info["data"][0]
    assert file_source["source"] == "file" and file_source["count"] == 3 and file_source["rows"] == 4
    assert file_source["map"] == {"text": "sentence", "label": "gold_label"}


def test_it_puts_the_model_in_the_loop_of_the_given_round(nli_task, tiny_encoder):
    summary = call_command("train_target_model", "nli", "--epochs", "1", "--name", "looped", "--in-loop", "1")

    model = MLModel.objects.get(name="looped")
    assert summary.endswith("in the loop of round 1")
    assert list(nli_task.rounds.get(number=1).target_models.all()) == [model]


def test_it_trains_an_extractive_qa_model(qa_task, tiny_encoder, models_dir):
    call_command("train_target_model", "qa", "--epochs", "1", "--name", "qa-test")

    model = MLModel.objects.get(name="qa-test")
    assert model.status == MLModel.Status.UPLOADED
    assert model.training_info["data"][0]["count"] == 68  # the seed train split
    output = load_predictor(model.path, task=qa_task).predict(
        [{"question": "When was it built?", "passage": "The bridge was built in 1890 by the river."}]
    )[0]
    assert set(output) >= {"answer", "start", "end", "score"}


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["nope"], "No task with code 'nope'"),
        (["sentiment", "--name", "Bad Name!"], "must be a slug"),
        (["sentiment", "--data", "/no/such/file.jsonl"], "no such file"),
        (["sentiment", "--data", "x.jsonl", "--map", "sentence"], "--map 'sentence': expected NAME=VALUE"),
        (["sentiment", "--data", __file__, "--map", "premise=sentence"], "unknown task field"),
        (["sentiment", "--data", __file__], "cannot tell the format"),
        (["sentiment", "--epochs", "0"], "--epochs must be at least 1"),
    ],
)
def test_it_refuses_bad_arguments_with_a_message_and_creates_nothing(default_tasks, tiny_encoder, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("train_target_model", *arguments)

    assert not MLModel.objects.exists()


def test_it_refuses_a_name_the_task_already_uses(sentiment_task, tiny_encoder):
    call_command("train_target_model", "sentiment", "--epochs", "1", "--name", "taken")

    with pytest.raises(CommandError, match="already has a model named 'taken'"):
        call_command("train_target_model", "sentiment", "--epochs", "1", "--name", "taken")

    assert MLModel.objects.filter(name="taken").count() == 1


def test_from_validated_adds_the_task_s_validated_examples_to_the_seed_set(sentiment_task, annotator, tiny_encoder):
    from annotation.models import Example, ValidationState

    round1 = sentiment_task.rounds.get(number=1)
    example = Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator,
        input={"prompt": "p", "text": "Not the worst night out, honestly."}, target={"label": "positive"},
        model_output={"label": "negative"}, model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT,
    )

    summary = call_command("train_target_model", "sentiment", "--from-validated", "--epochs", "1", "--name", "plus")

    assert "on 94 examples (seed 93, validated 1)" in summary
    validated = MLModel.objects.get(name="plus").training_info["data"][1]
    assert validated["example_ids"] == [example.pk] and validated["per_round"] == {"1": 1}


def test_it_reads_qa_training_data_with_answers_checked_against_the_passage(qa_task, tiny_encoder, tmp_path):
    passage = "The bridge was built in 1890 and rebuilt in 1952."
    data = tmp_path / "squad-like.jsonl"
    rows = [
        {"id": "a", "q": "When was the bridge built?", "context": passage, "answers": {"text": ["1890"], "answer_start": [24]}},
        {"id": "b", "q": "When was it rebuilt?", "context": passage, "answers": {"text": ["1952"], "answer_start": [3]}},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    arguments = ["train_target_model", "qa", "--data", str(data), "--map", "question=q", "--map", "passage=context", "--uid", "id"]

    with pytest.raises(CommandError, match="line 2: answers: '1952' is not at character 3 of the passage"):
        call_command(*arguments, "--epochs", "1", "--name", "squad-bad")

    rows[1]["answers"]["answer_start"] = [passage.index("1952")]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert "on 2 examples (file 2)" in call_command(*arguments, "--epochs", "1", "--name", "squad-ok")
    assert MLModel.objects.get(name="squad-ok").training_info["data"][0]["rows"] == 2
