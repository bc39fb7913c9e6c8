"""A visual question answering round runs through the whole cycle: image contexts uploaded, questions
and answers written against a tiny ViLT in the loop (the server decides by VQA accuracy whether each
fooled it), validated, the round closed into datasets whose items name the images by hash, and two
models (a registered directory and a submitted archive) plus a predictions file scored by VQA
accuracy, written to predictions files and ranked on the leaderboard."""

import json

import pytest

from annotation.services import create_example
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory, submit_predictions
from leaderboard.tests.conftest import predictions_jsonl, zip_directory
from tasks.data.images import ingest_images
from tasks.models import Context, DatasetItem
from tasks.loop.registry import clear_cache, load_predictor
from tasks.metrics.vqa import vqa_accuracy
from tests.image_support import SHAPES, image_file
from tests.upload_support import submit_unpacked
from tests.vqa_support import ANSWERS, QUESTIONS, build_tiny_vilt, vqa_task
from validation.round_close import close_round
from validation.services import record_validation


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """A private MEDIA_ROOT; the cache (submission rate counters) cleared around the test."""
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1000
    clear_cache()
    yield settings.MEDIA_ROOT
    clear_cache()
    cache.clear()


def _evaluate(model):
    evaluate_model(model.pk)
    for run in EvaluationRun.objects.filter(model=model):
        evaluate_run(run.pk)


def test_a_vqa_round_closes_into_datasets_that_rank_models(owner, annotator, validator, researcher, tmp_path, media):
    task = vqa_task(owner)
    files = [image_file(f"{s}{n}.png", shape=s, seed=n) for s in SHAPES for n in range(4)]
    ingest_images(task=task, acting_user=owner, files=files, round_number=1)
    in_loop = register_model_directory(actor=owner, task=task, name="vilt-1", published=True,
                                       path=build_tiny_vilt(tmp_path / "vilt1", seed=1))
    round1 = task.rounds.get(number=1)
    round1.target_models.add(in_loop)
    fooled = 0
    for n, context in enumerate(Context.objects.filter(round=round1).order_by("id")):
        question, answer = QUESTIONS[n % len(QUESTIONS)], ANSWERS[n % len(ANSWERS)]
        example = create_example(user=annotator, context=context, input={"question": question}, target={"answers": [answer]})
        assert example.input == {"image": context.uid, "question": question}
        assert example.model_output["answer"] in ANSWERS and 0 <= example.model_output["score"] <= 1
        assert example.model_wrong == (vqa_accuracy(example.model_output["answer"], [answer]) < 0.3)
        fooled += example.model_wrong
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    assert fooled > 0
    datasets = close_round(round=round1, acting_user=owner, ratios={"train": 0.5, "dev": 0.25, "test": 0.25}, seed=1)
    items = list(DatasetItem.objects.filter(dataset__in=datasets))
    hashes = set(Context.objects.filter(round=round1).values_list("uid", flat=True))
    assert items and all(item.input["image"] in hashes and item.input["question"] in QUESTIONS for item in items)
    assert all(len(item.target["answers"]) == 1 for item in items)

    directory = build_tiny_vilt(tmp_path / "vilt2", seed=2)
    archived = submit_unpacked(user=researcher, task=task, upload=zip_directory(directory), name="vilt-2")
    assert archived.status == "queued", archived.failure_reason
    models = [in_loop, archived]
    for model, path in ((in_loop, tmp_path / "vilt1"), (archived, directory)):
        _evaluate(model)
        predictor = load_predictor(path, task=task)
        for run in EvaluationRun.objects.filter(model=model):
            assert run.status == "done", run.error
            ordered = list(run.dataset.items.order_by("id"))
            lines = [json.loads(line) for line in (media / run.predictions_file).read_text().splitlines()]
            by_uid = {line["uid"]: line for line in lines}
            expected = predictor.predict([item.input for item in ordered], batch_size=3)
            accuracies = [vqa_accuracy(e["answer"], item.target["answers"]) for e, item in zip(expected, ordered)]
            assert [by_uid[item.uid]["prediction"]["answer"] for item in ordered] == [e["answer"] for e in expected]
            assert [by_uid[item.uid]["vqa_accuracy"] for item in ordered] == pytest.approx(accuracies)
            assert run.metrics["vqa_accuracy"] == pytest.approx(sum(accuracies) / len(accuracies))
    test_items = DatasetItem.objects.filter(dataset__in=datasets, dataset__access="scoring")
    guesses = submit_predictions(user=researcher, task=task, name="always-yes", upload=predictions_jsonl(
        [{"uid": item.uid, "answer": "Yes."} for item in test_items]))
    _evaluate(guesses)
    runs = EvaluationRun.objects.filter(model=guesses)
    assert runs.exists() and all(r.status == "done" for r in runs), [r.error for r in runs]
    for run in runs:  # "Yes." is "yes" after the normalisation
        gold = [item.target["answers"] for item in run.dataset.items.all()]
        assert run.metrics["vqa_accuracy"] == pytest.approx(sum(vqa_accuracy("yes", g) for g in gold) / len(gold))
    models.append(guesses)
    table = leaderboard_table(task)
    assert {row.model_id for row in table.rows} == {m.pk for m in models}
    assert min(row.rank for row in table.rows) == 1
