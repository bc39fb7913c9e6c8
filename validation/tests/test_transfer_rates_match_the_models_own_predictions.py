"""The transfer job on DynaSent round 1: examples written against the model in the loop, validated, then
put to the task's other models; each example's rate equals what the models' own predictions say.

Models: the two default sentiment models (``minilm-seed`` in the loop, ``minilm-few``) trained from
the seed data on the tiny base encoder (``tiny_encoder``: a 2-layer BERT standing in for MiniLM, one
epoch), and one more tiny classifier (``tests/tiny_models.py``, random weights); a predictions file
is on the task too and is skipped.
"""

import json

import pytest

from annotation.models import TransferRate, TransferResult
from annotation.services import create_example
from tasks.loop.registry import get_predictor
from tasks.loop.training.default_models import BASELINE_MODEL_NAME, DEFAULT_MODEL_NAME, ensure_default_model
from tasks.models import MLModel
from tests.shared_data import shared_file
from tests.tiny_models import build_tiny_classifier
from validation.export import export_rows
from validation.jobs import measure_transfer
from validation.selectors import validated_queryset
from validation.services import record_validation


def dynasent_round1(n: int, labels: list[str]) -> list[dict]:
    """The first ``n`` DynaSent round-1 dev sentences whose gold label is one of the task's."""
    rows = []
    with shared_file("dynasent/dynasent-v1.1-round01-yelp-dev.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["gold_label"] in labels:
                rows.append(row)
            if len(rows) == n:
                return rows
    return rows


@pytest.fixture
def sentiment_with_three_models(sentiment_task, tiny_encoder, models_dir, tmp_path):
    """The sentiment task with its two default models and a third tiny classifier, all ready."""
    seed = ensure_default_model(sentiment_task, epochs=1, name=DEFAULT_MODEL_NAME).model
    few = ensure_default_model(sentiment_task, epochs=1, name=BASELINE_MODEL_NAME).model
    extra_dir = build_tiny_classifier(tmp_path / "extra", sentiment_task.labels, seed=7)
    extra = MLModel.objects.create(task=sentiment_task, name="tiny-extra", path=str(extra_dir), status=MLModel.Status.UPLOADED,
                                  published=True)
    MLModel.objects.create(task=sentiment_task, name="a-predictions-file", kind=MLModel.Kind.PREDICTIONS, path=str(tmp_path / "p.jsonl"))
    return seed, few, extra


def test_each_rate_is_the_share_of_the_other_models_whose_own_prediction_is_wrong(
    sentiment_task, sentiment_with_three_models, annotator, owner, settings
):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    seed, few, extra = sentiment_with_three_models
    round1 = sentiment_task.rounds.get(number=1)
    assert list(round1.target_models.all()) == [seed]
    context = round1.contexts.first()
    written = [
        create_example(user=annotator, context=context, input={"text": row["sentence"]}, target={"label": row["gold_label"]})
        for row in dynasent_round1(24, sentiment_task.labels)
    ]
    for example in written[:20]:  # 20 validated by the owner; 4 stay pending and are never put to other models
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    corrected = written[0]
    record_validation(example=corrected, validator=owner, label="correct", mode="owner",
                      metadata={"corrected_label": next(l for l in sentiment_task.labels if l != corrected.target["label"])})

    summary = measure_transfer(round1.pk)

    assert summary.startswith(f"{round1}: 20 validated examples, 40 answers run, 20 rated")
    assert "predictions files skipped: a-predictions-file" in summary
    validated = list(validated_queryset(round=round1))
    final = {row["id"]: row["final_target"] for row in export_rows(validated_queryset(round=round1))}
    others = [few, extra]
    predictions = {m.pk: get_predictor(m).predict([{"text": e.input["text"]} for e in validated]) for m in others}
    for i, example in enumerate(validated):
        fooled = sum(predictions[m.pk][i]["label"] != final[example.pk]["label"] for m in others)
        rate = TransferRate.objects.get(example=example)
        assert (rate.fooled, rate.tried) == (fooled, 2), example.pk
    assert not TransferRate.objects.filter(example__in=written[20:]).exists()
    assert not TransferResult.objects.filter(model=seed).exists()  # never put to the model it was written against


def test_a_second_run_runs_no_model_and_keeps_the_rates(sentiment_task, sentiment_with_three_models, annotator, owner, settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    round1 = sentiment_task.rounds.get(number=1)
    context = round1.contexts.first()
    for row in dynasent_round1(6, sentiment_task.labels):
        example = create_example(user=annotator, context=context, input={"text": row["sentence"]}, target={"label": row["gold_label"]})
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    measure_transfer(round1.pk)
    before = sorted(TransferRate.objects.values_list("example_id", "fooled", "tried"))

    summary = measure_transfer(round1.pk)

    assert "6 validated examples, 0 answers run, 6 rated" in summary
    assert sorted(TransferRate.objects.values_list("example_id", "fooled", "tried")) == before
