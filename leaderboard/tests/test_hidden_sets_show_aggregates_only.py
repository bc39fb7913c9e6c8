"""On a hidden set a researcher reads aggregate scores only: per-tag scores of small tags (which would
give away labels one submission at a time) are withheld from them, on the page and in the API; the
task's owners read them all."""

import pytest

from leaderboard.selectors import HIDDEN_TAG_MIN_ITEMS
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, evaluate_now, make_dataset, predictions_jsonl


@pytest.fixture
def evaluated(researcher, sentiment_task):
    big = [(f"b{i}", {"text": f"sentence {i}"}, {"label": "positive"}, "big") for i in range(HIDDEN_TAG_MIN_ITEMS)]
    small = [(uid, {"text": text}, {"label": label}, "few") for uid, text, label, _ in SENTIMENT_ITEMS[:2]]
    dataset = make_dataset(sentiment_task, "sentiment-r1-test", big + small)
    assert dataset.labels_hidden
    rows = [{"uid": uid, "label": "positive"} for uid, *_ in big + small]
    model = submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(rows), name="p", published=True)
    evaluate_now(model)
    return model


def test_the_researcher_gets_large_tags_and_the_aggregate_only(client, researcher, evaluated):
    client.force_login(researcher)

    evaluation = client.get(f"/api/v1/models/{evaluated.pk}").json()["evaluations"][0]
    page = client.get(f"/models/{evaluated.pk}/status/").content.decode()

    assert set(evaluation["per_tag"]) == {"big"} and evaluation["performance"] == pytest.approx(21 / 22)
    assert "<td>big</td>" in page and "<td>few</td>" not in page


def test_the_task_owner_gets_every_tag(client, owner, evaluated):
    client.force_login(owner)

    evaluation = client.get(f"/api/v1/models/{evaluated.pk}").json()["evaluations"][0]

    assert set(evaluation["per_tag"]) == {"big", "few"}
