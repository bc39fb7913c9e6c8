"""An image classification task runs end to end like the text kinds: a tiny ViT (random weights,
safetensors, its own image processor) answers in the loop on an image context and the server
decides whether the annotator fooled it; two models are scored on an image dataset (accuracy,
macro-F1 as scikit-learn computes them, predictions files) and ranked on the leaderboard beside a predictions file; one is
submitted as a model archive."""

import json

import pytest
from sklearn.metrics import accuracy_score, f1_score

from annotation.services import create_example
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory, submit_predictions
from leaderboard.tests.conftest import predictions_jsonl, zip_directory
from tasks.data.images import ingest_images
from tasks.models import Context, Dataset, DatasetItem
from tasks.loop.registry import clear_cache, load_predictor
from tests.image_support import SHAPES, image_file, shapes_task
from tests.tiny_models import build_tiny_image_classifier
from tests.upload_support import submit_unpacked


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """A private MEDIA_ROOT; the cache (submission rate counters) cleared around the test, as the app conftests do."""
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    clear_cache()
    yield settings.MEDIA_ROOT
    clear_cache()
    cache.clear()


@pytest.fixture
def image_task(owner, annotator):
    task = shapes_task(owner)
    files = [image_file(f"{shape}-{seed}.png", shape=shape, seed=seed) for shape in SHAPES for seed in range(3)]
    ingest_images(task=task, acting_user=owner, files=files, round_number=1)
    return task


def _evaluate(model):
    evaluate_model(model.pk)
    for run in EvaluationRun.objects.filter(model=model):
        evaluate_run(run.pk)


def test_an_annotator_fools_an_image_classifier_in_the_loop(image_task, owner, annotator, tmp_path):
    model = register_model_directory(
        actor=owner, task=image_task, path=build_tiny_image_classifier(tmp_path / "vit", list(SHAPES)), name="tiny-vit",
    )
    round1 = image_task.rounds.get(number=1)
    round1.target_models.add(model)
    context = Context.objects.filter(round=round1).first()
    example = create_example(user=annotator, context=context, input={"note": "a yellow blob"}, target={"label": "square"})
    assert example.input["image"] == context.uid
    assert example.model_output["label"] in SHAPES
    assert sum(example.model_output["probs"].values()) == pytest.approx(1.0, abs=1e-5)
    assert example.model_wrong == (example.model_output["label"] != "square")


def test_image_models_are_scored_and_ranked(image_task, owner, researcher, tmp_path, media):
    contexts = list(Context.objects.filter(round__task=image_task).order_by("id"))
    gold = [shape for shape in SHAPES for _ in range(3)]
    dataset = Dataset.objects.create(task=image_task, name="shapes-test", access="scoring", round=image_task.rounds.get())
    DatasetItem.objects.bulk_create([
        DatasetItem(dataset=dataset, uid=f"i{n}", input={"image": c.uid}, target={"label": label})
        for n, (c, label) in enumerate(zip(contexts, gold))
    ])
    models = []
    for seed in (1, 2):
        directory = build_tiny_image_classifier(tmp_path / f"vit{seed}", list(SHAPES), seed=seed)
        if seed == 1:  # an owner registers a directory on the server
            model = register_model_directory(actor=owner, task=image_task, path=directory, name="vit-1", published=True)
        else:  # a researcher submits a model archive, unpacked by its job
            model = submit_unpacked(user=researcher, task=image_task, upload=zip_directory(directory), name="vit-2")
            assert model.status == "queued", model.failure_reason
        _evaluate(model)
        predictor = load_predictor(directory, task=image_task)
        expected = [o["label"] for o in predictor.predict([{"image": c.uid} for c in contexts], batch_size=4)]
        run = EvaluationRun.objects.get(model=model, dataset=dataset)
        assert run.status == "done", run.error
        assert run.metrics["accuracy"] == pytest.approx(accuracy_score(gold, expected))
        assert run.metrics["macro_f1"] == pytest.approx(f1_score(gold, expected, average="macro", zero_division=0))
        lines = [json.loads(line) for line in (media / run.predictions_file).read_text().splitlines()]
        assert [line["prediction"]["label"] for line in lines] == expected
        assert [line["correct"] for line in lines] == [g == e for g, e in zip(gold, expected)]
        models.append(model)
    guesses = submit_predictions(user=researcher, task=image_task, name="all-circles", upload=predictions_jsonl(
        [{"uid": f"i{n}", "label": "circle"} for n in range(len(gold))]))
    _evaluate(guesses)
    assert EvaluationRun.objects.get(model=guesses).metrics["accuracy"] == pytest.approx(1 / 3)
    models.append(guesses)
    table = leaderboard_table(image_task)
    assert {row.model_id for row in table.rows} == {m.pk for m in models}
    assert len(table.rows) == 3 and min(row.rank for row in table.rows) == 1

