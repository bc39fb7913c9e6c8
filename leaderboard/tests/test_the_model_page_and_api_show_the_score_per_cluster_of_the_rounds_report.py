"""A model's page and its API record give, per dataset of a round with a finished diversity report, the
model's accuracy on the items of each of the report's clusters, computed from the run's stored per-item
results: does it fail one quirk or many? Items in no cluster get a row of their own; items the report has
not placed are counted apart; without a report nothing is shown."""

import pytest

from annotation.diversity_models import RoundDiversity
from leaderboard.tests.conftest import make_clustered_dataset, make_scored_run
from tasks.models import MLModel

CLUSTERS = [
    {"cluster": 0, "size": 6, "share": 0.6, "terms": ["soup", "cold", "staff", "room", "queue", "late"], "examples": [],
     "assigned": 4, "vmer": 1.0},
    {"cluster": 1, "size": 4, "share": 0.4, "terms": ["born", "died"], "examples": [], "assigned": 3, "vmer": 1.0},
]
# item:    0  1  2  3 | 4  5  6 |  7 | 8 (written after the report)
PLACES = [0, 0, 0, 0, 1, 1, 1, -1, None]
RIGHT = [True, True, True, False, False, False, True, True, False]


@pytest.fixture
def model(researcher, sentiment_task):
    return MLModel.objects.create(task=sentiment_task, owner=researcher, name="clustered", published=True, status="evaluated")


@pytest.fixture
def clustered_run(model, sentiment_task, researcher):
    dataset = make_clustered_dataset(sentiment_task, "sentiment-r1-clustered", PLACES, CLUSTERS, author=researcher)
    return make_scored_run(model, dataset, right=RIGHT)


def test_the_api_gives_the_accuracy_of_each_cluster(client, outsider, model, clustered_run):
    client.force_login(outsider)

    evaluation = client.get(f"/api/v1/models/{model.pk}").json()["evaluations"][0]

    per_cluster = evaluation["per_cluster"]
    assert per_cluster["clusters"] == [
        {"cluster": 0, "terms": ["soup", "cold", "staff", "room", "queue"], "share": 0.6, "n": 4, "score": 0.75},
        {"cluster": 1, "terms": ["born", "died"], "share": 0.4, "n": 3, "score": pytest.approx(1 / 3)},
        {"cluster": -1, "terms": [], "share": None, "n": 1, "score": 1.0},
    ]
    assert per_cluster["unplaced"] == 1 and per_cluster["withheld"] == 0


def test_the_page_shows_a_table_per_cluster(client, outsider, model, clustered_run):
    client.force_login(outsider)

    page = client.get(f"/models/{model.pk}/").content.decode()

    assert "<h3>Per cluster" in page and "<caption>clustered on sentiment-r1-clustered, per cluster of round" in page
    assert ('<tr data-cluster="0">\n<th scope="row">0</th>\n<td>soup, cold, staff, room, queue</td>\n'
            '<td>4</td><td>75.0</td>') in page
    assert '<tr data-cluster="1">\n<th scope="row">1</th>\n<td>born, died</td>\n<td>3</td><td>33.3</td>' in page
    assert '<tr data-cluster="-1">\n<th scope="row">no cluster</th>\n<td>—</td>\n<td>1</td><td>100.0</td>' in page
    assert 'data-unplaced="1"' in page and "grouped by HDBSCAN" in page


def test_nothing_is_shown_without_a_finished_report(client, outsider, model, clustered_run):
    RoundDiversity.objects.filter(round=clustered_run.dataset.round).update(status="running")
    client.force_login(outsider)

    evaluation = client.get(f"/api/v1/models/{model.pk}").json()["evaluations"][0]
    page = client.get(f"/models/{model.pk}/").content.decode()

    assert evaluation["per_cluster"] is None and "Per cluster" not in page


def test_a_run_whose_results_do_not_match_the_items_is_skipped(client, outsider, model, clustered_run):
    clustered_run.dataset.items.order_by("-pk").first().delete()
    client.force_login(outsider)

    evaluation = client.get(f"/api/v1/models/{model.pk}").json()["evaluations"][0]

    assert evaluation["per_cluster"] is None
