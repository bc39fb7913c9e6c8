"""Closing a round whose dev or test set would be smaller than the owner's minimum
(``min_scoring_items``) is refused with the reason, or merged when the owner asks (the preview
says how); a tiny scoring set beside a large one is a warning in the preview."""

import pytest

from dynabench.errors import RuleError
from tasks.models import Dataset, Round
from validation.round_close import close_round, preview_round_close
from validation.tests.conftest import make_example

RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}  # 10 validated examples -> 8 / 1 / 1


@pytest.fixture
def ten_validated(sentiment_task, annotator):
    for _ in range(10):
        make_example(sentiment_task, annotator, validation_state="verified_correct")
    return sentiment_task.current_round()


def _minimum(task, n):
    task.config = {**task.config, "min_scoring_items": n}
    task.save(update_fields=["config"])


def test_a_one_item_test_set_below_the_minimum_is_refused(owner, sentiment_task, ten_validated):
    _minimum(sentiment_task, 2)

    preview = preview_round_close(ten_validated, ratios=RATIOS)
    assert not preview.can_close
    assert "The test set would hold 1 item, fewer than the minimum of 2 this task sets" in preview.problems[1]
    with pytest.raises(RuleError) as refused:
        close_round(round=ten_validated, acting_user=owner, ratios=RATIOS)
    assert refused.value.code == "small_split" and "merge the small scoring splits" in refused.value.message
    assert Round.objects.get(pk=ten_validated.pk).status == "open" and not Dataset.objects.filter(round=ten_validated).exists()


def test_merging_puts_dev_into_test_when_together_they_reach_the_minimum(owner, sentiment_task, ten_validated):
    _minimum(sentiment_task, 2)

    preview = preview_round_close(ten_validated, ratios=RATIOS, merge_small=True)
    assert preview.can_close and preview.sizes == {"train": 8, "dev": 0, "test": 2}
    assert preview.notes == ["Dev and test merge into one test set of 2 items (each alone is below the minimum of 2); "
                             "no dev set is written for this round."]
    datasets = close_round(round=ten_validated, acting_user=owner, ratios=RATIOS, merge_small=True)
    assert [(d.split, d.items.count()) for d in datasets] == [("train", 8), ("test", 2)]


def test_merging_below_the_minimum_even_together_keeps_everything_for_training(owner, sentiment_task, ten_validated):
    _minimum(sentiment_task, 5)

    preview = preview_round_close(ten_validated, ratios=RATIOS, merge_small=True)
    assert preview.sizes == {"train": 10, "dev": 0, "test": 0} and "adds no scoring set" in preview.notes[0]
    assert [d.split for d in close_round(round=ten_validated, acting_user=owner, ratios=RATIOS, merge_small=True)] == ["train"]


def test_a_tiny_scoring_set_beside_a_large_one_is_a_warning(owner, sentiment_task, ten_validated):
    large = Dataset.objects.create(task=sentiment_task, name="sentiment-seed-test", split="test", access=Dataset.Access.SCORING,
                                   item_count=43)

    preview = preview_round_close(ten_validated, ratios=RATIOS)
    assert preview.can_close
    assert preview.warnings[1] == (
        f"The test set would hold 1 item, yet weigh in the Dynascore as much as {large.name} (43 items); its score will be "
        "noisy. Consider validating more, a larger minimum (Settings), or merging."
    )
