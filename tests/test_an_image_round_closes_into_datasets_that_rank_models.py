"""An image classification round runs through the whole cycle: image contexts uploaded, examples
written against a ViT in the loop, validated by the owner, the round closed into train/dev/test
datasets whose items name the images by hash, and two models scored on them and ranked."""

import pytest

from annotation.services import create_example
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory
from tasks.data.images import ingest_images
from tasks.models import Context, DatasetItem
from tasks.loop.registry import clear_cache
from tests.image_support import SHAPES, image_file, shapes_task
from tests.tiny_models import build_tiny_image_classifier
from validation.round_close import close_round
from validation.services import record_validation


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """A private MEDIA_ROOT; the cache (submission rate counters) cleared around the test, as the app conftests do."""
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1000
    clear_cache()
    yield
    clear_cache()
    cache.clear()


def test_an_image_round_closes_into_datasets_that_rank_models(owner, annotator, tmp_path):
    task = shapes_task(owner)
    files = [image_file(f"{s}{n}.png", shape=s, seed=n) for s in SHAPES for n in range(4)]
    ingest_images(task=task, acting_user=owner, files=files, round_number=1)
    models = [
        register_model_directory(actor=owner, task=task, name=f"vit-{seed}", published=True,
                                 path=build_tiny_image_classifier(tmp_path / f"vit{seed}", list(SHAPES), seed=seed))
        for seed in (1, 2)
    ]
    round1 = task.rounds.get(number=1)
    round1.target_models.add(models[0])
    for n, context in enumerate(Context.objects.filter(round=round1).order_by("id")):
        example = create_example(user=annotator, context=context, input={"note": ""}, target={"label": SHAPES[n % 3]})
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    datasets = close_round(round=round1, acting_user=owner, ratios={"train": 0.5, "dev": 0.25, "test": 0.25}, seed=1)
    items = DatasetItem.objects.filter(dataset__in=datasets)
    assert items.count() == 12
    hashes = set(Context.objects.filter(round=round1).values_list("uid", flat=True))
    assert all(item.input["image"] in hashes for item in items)
    for model in models:
        evaluate_model(model.pk)
        for run in EvaluationRun.objects.filter(model=model):
            evaluate_run(run.pk)
        runs = EvaluationRun.objects.filter(model=model)
        assert runs.exists() and all(r.status == "done" for r in runs), [r.error for r in runs]
    table = leaderboard_table(task)
    assert {row.model_id for row in table.rows} == {m.pk for m in models}
