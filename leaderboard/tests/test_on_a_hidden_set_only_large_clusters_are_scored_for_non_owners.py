"""On a hidden set, a cluster's score is given to those who may not see the labels only for clusters of at
least HIDDEN_TAG_MIN_ITEMS items (the per-tag rule: a score over a few items would tell their labels one
submission at a time), on the page and in the API; the task's owners read every cluster."""

import pytest

from leaderboard.selectors import HIDDEN_TAG_MIN_ITEMS
from leaderboard.tests.conftest import make_clustered_dataset, make_scored_run
from tasks.models import MLModel

CLUSTERS = [
    {"cluster": 0, "size": 8, "share": 0.8, "terms": ["soup", "cold"], "examples": [], "assigned": 20, "vmer": 1.0},
    {"cluster": 1, "size": 2, "share": 0.2, "terms": ["born", "died"], "examples": [], "assigned": 2, "vmer": 1.0},
]


@pytest.fixture
def model(researcher, sentiment_task):
    places = [0] * HIDDEN_TAG_MIN_ITEMS + [1, 1]
    dataset = make_clustered_dataset(sentiment_task, "sentiment-r1-hidden", places, CLUSTERS, author=researcher,
                                     label_visibility="hidden")
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="clustered", published=True, status="evaluated")
    make_scored_run(model, dataset, right=[True] * HIDDEN_TAG_MIN_ITEMS + [True, False])
    return model


def test_the_models_owner_gets_the_large_cluster_only(client, researcher, model):
    client.force_login(researcher)

    per_cluster = client.get(f"/api/v1/models/{model.pk}").json()["evaluations"][0]["per_cluster"]
    page = client.get(f"/models/{model.pk}/status/").content.decode()

    assert per_cluster["clusters"] == [
        {"cluster": 0, "terms": ["soup", "cold"], "share": 0.8, "n": HIDDEN_TAG_MIN_ITEMS, "score": 1.0},
    ]
    assert per_cluster["withheld"] == 1
    assert '<tr data-cluster="0">' in page and '<tr data-cluster="1">' not in page and 'data-withheld="1"' in page


def test_the_task_owner_gets_every_cluster(client, owner, model):
    client.force_login(owner)

    per_cluster = client.get(f"/api/v1/models/{model.pk}").json()["evaluations"][0]["per_cluster"]
    page = client.get(f"/models/{model.pk}/status/").content.decode()

    assert [(c["cluster"], c["n"], c["score"]) for c in per_cluster["clusters"]] == [(0, HIDDEN_TAG_MIN_ITEMS, 1.0), (1, 2, 0.5)]
    assert per_cluster["withheld"] == 0
    assert '<tr data-cluster="1">' in page and "data-withheld" not in page
