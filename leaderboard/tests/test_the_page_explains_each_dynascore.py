"""The leaderboard explains each model's Dynascore from the page alone: "Why this order" gives each
metric's part (weight × value ÷ AMRS), the parts add up to the Dynascore (API) or, when the exchange
rates are unstable (two models, as on a first run), to each model's gap to the first-ranked model,
which the table then shows instead of five-digit scores, saying why."""

import re

import pytest
from rest_framework.test import APIClient

from leaderboard.models import LeaderboardCache
from tasks.models import MLModel


def first_run_like(task, owner):
    """Two published models measured on every metric, as ``make run`` leaves a leaderboard: accuracies
    70.4 and 28.6, the same encoder (memory 0.512 vs 0.511 GiB), so memory's AMRS is tiny."""
    from tasks.models import Dataset

    dataset = Dataset.objects.create(task=task, name="seed-test", access="scoring", weight=1.0)
    seed = MLModel.objects.create(task=task, owner=owner, name="minilm-seed", published=True, status="evaluated")
    few = MLModel.objects.create(task=task, owner=owner, name="minilm-few", published=True, status="evaluated")
    scores = {seed.pk: (70.4, 210.0, 0.512, 88.0), few.pk: (28.6, 205.0, 0.511, 91.0)}
    LeaderboardCache.objects.update_or_create(task=task, defaults={
        "datasets": [{"id": dataset.pk, "name": dataset.name, "round": None, "weight": 1.0, "not_applicable": ["fairness"]}],
        "rows": [
            {"id": pk, "name": m.name, "owner": owner.username, "kind": m.kind, "status": "evaluated", "runs": {},
             "scores": {str(dataset.pk): {"performance": p, "throughput": t, "memory": mem, "robustness": r, "fairness": None}}}
            for pk, m, (p, t, mem, r) in ((seed.pk, seed, scores[seed.pk]), (few.pk, few, scores[few.pk]))
        ],
        "replicates": b"",
    })
    return seed, few


@pytest.fixture
def two_models(sentiment_task, researcher):
    return first_run_like(sentiment_task, researcher)


def test_the_api_parts_add_up_to_each_dynascore(two_models, sentiment_task):
    body = APIClient().get(f"/api/v1/tasks/{sentiment_task.code}/leaderboard").json()

    assert [r["name"] for r in body["rows"]] == ["minilm-seed", "minilm-few"]
    for row in body["rows"]:
        assert sum(v or 0 for v in row["contributions"].values()) == pytest.approx(row["dynascore"])
    assert body["rows"][0]["dynascore"] > 1000  # memory left ÷ a tiny AMRS, for both models alike
    assert body["stability"]["stable"] is False
    assert "Only 2 models with distinct performance" in body["stability"]["reasons"][0]
    assert body["datasets"][0]["not_applicable"] == ["fairness"]


def test_the_page_shows_gaps_and_their_parts_when_the_rates_are_unstable(client, two_models, sentiment_task):
    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()
    api = APIClient().get(f"/api/v1/tasks/{sentiment_task.code}/leaderboard").json()["rows"]
    seed, few = api

    assert "Exchange rates unstable." in html and "Dynascore gap" in html
    table = html[html.index('<table class="leaderboard">'):html.index("</table>")]
    assert f"{seed['dynascore']:,.2f}" not in table  # no five-digit score in the ranking itself
    gap = few["dynascore"] - seed["dynascore"]
    assert f"{gap:+,.2f}" in table and ">best<" in table

    # "Why this order": the parts of minilm-few's gap, one per metric, add up to the gap
    why = html[html.index('id="why-this-order"'):]
    row = re.search(rf'<tr data-model="{few["model_id"]}">(.*?)</tr>', why).group(1)
    parts = dict(re.findall(r'data-metric="(\w+)">([^<]*)<', row))
    assert parts["fairness"] == "n/a"
    total = sum(float(v.replace(",", "")) for v in parts.values() if v not in ("n/a", "not counted"))
    assert total == pytest.approx(gap, abs=0.02)


def test_with_three_separated_models_the_absolute_dynascore_is_shown(client, two_models, sentiment_task, researcher):
    seed, few = two_models
    third = MLModel.objects.create(task=sentiment_task, owner=researcher, name="third", published=True, status="evaluated")
    cache = LeaderboardCache.objects.get(task=sentiment_task)
    dataset_id = cache.datasets[0]["id"]
    cache.rows = [*cache.rows, {"id": third.pk, "name": "third", "owner": "r", "kind": third.kind, "status": "evaluated", "runs": {},
                                "scores": {str(dataset_id): {"performance": 50.0, "throughput": 150.0, "memory": 0.9, "robustness": 80.0,
                                                             "fairness": None}}}]
    cache.save()

    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()
    rows = APIClient().get(f"/api/v1/tasks/{sentiment_task.code}/leaderboard").json()["rows"]

    assert "Exchange rates unstable." not in html
    table = html[html.index('<table class="leaderboard">'):html.index("</table>")]
    for row in rows:
        assert f"{row['dynascore']:,.2f}" in table
