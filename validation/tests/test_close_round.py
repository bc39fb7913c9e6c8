"""Closing a round turns its verified-correct examples into train/dev/test datasets."""

import pytest

from annotation.models import Example
from dynabench.errors import NotAllowed, RuleError
from tasks.models import Dataset, DatasetItem, Round
from validation.round_close import close_round
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def verified_round(sentiment_task, annotator, owner):
    examples = [make_example(sentiment_task, annotator, label="positive") for _ in range(20)]
    for e in examples[:17]:
        record_validation(example=e, validator=owner, label="correct", mode="owner")
    record_validation(example=examples[17], validator=owner, label="incorrect", mode="owner")
    return sentiment_task.current_round()


def test_it_closes_the_round_and_builds_three_datasets(verified_round, owner):
    datasets = close_round(round=verified_round, acting_user=owner, ratios={"train": 0.6, "dev": 0.2, "test": 0.2}, seed=7)

    verified_round.refresh_from_db()
    assert verified_round.status == Round.Status.CLOSED
    assert [d.name for d in datasets] == ["sentiment-r1-train", "sentiment-r1-dev", "sentiment-r1-test"]
    assert [d.access for d in datasets] == ["standard", "scoring", "scoring"]
    assert [d.items.count() for d in datasets] == [10, 4, 3]  # 17 verified: 10.2 / 3.4 / 3.4 by largest remainder
    assert Example.objects.exclude(split="").count() == 17
    item = datasets[1].items.first()
    example = Example.objects.get(pk=item.metadata["example_id"])
    assert example.split == "dev" and item.input == example.input and item.target == {"label": "positive"}


def test_closing_again_changes_nothing_and_never_duplicates(verified_round, owner):
    first = {d.name: sorted(d.items.values_list("uid", flat=True)) for d in close_round(round=verified_round, acting_user=owner, seed=3)}
    versions = list(Dataset.objects.order_by("pk").values_list("pk", "version", "checksum"))

    again = {d.name: sorted(d.items.values_list("uid", flat=True)) for d in close_round(round=verified_round, acting_user=owner, seed=4)}

    assert first == again  # a closed round is not rebuilt, whatever the seed
    assert list(Dataset.objects.order_by("pk").values_list("pk", "version", "checksum")) == versions
    assert Dataset.objects.filter(round=verified_round).count() == 3
    assert DatasetItem.objects.count() == 17


def test_an_owner_correction_becomes_the_dataset_target(sentiment_task, annotator, owner):
    example = make_example(sentiment_task, annotator, label="positive")
    record_validation(example=example, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "neutral"})
    for _ in range(2):
        record_validation(example=make_example(sentiment_task, annotator), validator=owner, label="correct", mode="owner")

    close_round(round=sentiment_task.current_round(), acting_user=owner, ratios={"train": 0.34, "dev": 0.33, "test": 0.33})

    assert DatasetItem.objects.get(uid=f"e{example.pk}").target == {"label": "neutral"}


def test_only_owners_may_close_and_ratios_must_sum_to_one(verified_round, validator, owner):
    with pytest.raises(NotAllowed, match="Only an owner"):
        close_round(round=verified_round, acting_user=validator)
    with pytest.raises(RuleError, match="sum to 1"):
        close_round(round=verified_round, acting_user=owner, ratios={"train": 0.5, "dev": 0.2, "test": 0.2})
    verified_round.refresh_from_db()
    assert verified_round.status == Round.Status.OPEN and not Dataset.objects.exists()
