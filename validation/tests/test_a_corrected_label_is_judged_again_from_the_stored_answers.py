"""Rates are recomputed from the stored answers: when the owner corrects a validated example's label, each
answer is judged again against the new label and the rate follows, without running any model."""

from annotation.models import TransferRate, TransferResult
from tasks.models import MLModel
from validation.services import record_validation
from validation.tests.conftest import make_example
from validation.transfer import recompute_rates


def test_the_rate_follows_the_owner_s_correction(sentiment_task, annotator, owner):
    example = make_example(sentiment_task, annotator, label="positive")
    record_validation(example=example, validator=owner, label="correct", mode="owner")
    says = {"a": "neutral", "b": "positive", "c": "negative"}
    for name, label in says.items():
        model = MLModel.objects.create(task=sentiment_task, name=name, path=f"/nowhere/{name}", status=MLModel.Status.EVALUATED,
                                       published=True)
        TransferResult.objects.create(example=example, model=model, output={"label": label}, target={"label": "positive"},
                                      fooled=label != "positive")
    MLModel.objects.create(task=sentiment_task, name="failed", path="/nowhere/failed", status=MLModel.Status.FAILED)
    recompute_rates(example.round)
    assert (TransferRate.objects.get(example=example).fooled, TransferRate.objects.get(example=example).tried) == (2, 3)

    record_validation(example=example, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "neutral"})
    recompute_rates(example.round)

    rate = TransferRate.objects.get(example=example)
    assert (rate.fooled, rate.tried) == (2, 3)  # now b and c are wrong, a is right
    assert dict(TransferResult.objects.values_list("model__name", "fooled")) == {"a": False, "b": True, "c": True}
    assert all(target == {"label": "neutral"} for target in TransferResult.objects.values_list("target", flat=True))


def test_an_example_no_longer_validated_loses_its_rate(sentiment_task, annotator, owner):
    example = make_example(sentiment_task, annotator)
    record_validation(example=example, validator=owner, label="correct", mode="owner")
    TransferRate.objects.create(example=example, fooled=1, tried=1)

    record_validation(example=example, validator=owner, label="incorrect", mode="owner")
    recompute_rates(example.round)

    assert not TransferRate.objects.filter(example=example).exists()
