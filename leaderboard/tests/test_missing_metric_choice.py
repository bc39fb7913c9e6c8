"""The missing-metric choice (rank models lacking a metric on the metrics they have, or list them as
pending) is a field of its own on a saved leaderboard, on the page, in the form and in the API; bad
values are refused, and saved ``drop_metric`` choices become ``per_model``."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from leaderboard.models import LeaderboardConfig, MissingMetric
from leaderboard.tests.test_leaderboard_page import names_in_order

BEFORE = [("leaderboard", "0003_config_slug_fits_its_column")]


def test_a_fork_stores_the_choice_in_its_own_field_and_applies_it(client, researcher, ranked_sentiment, sentiment_task):
    # given prediction-file models (no throughput or memory) and the default weights
    client.force_login(researcher)

    # when a fork lists models without a metric as pending
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "strict", "missing_metric": "exclude_model"})

    # then the choice is its own field, the weights hold metrics only, and the fork page applies it
    config = LeaderboardConfig.objects.get()
    assert config.missing_metric == MissingMetric.EXCLUDE_MODEL
    assert set(config.metric_weights) == {"performance", "throughput", "memory", "robustness", "fairness"}
    html = client.get(response["Location"]).content.decode()
    assert names_in_order(html) == []
    assert 'value="exclude_model" selected' in html
    assert "no throughput" in html


def test_the_default_choice_ranks_them_and_the_snapshot_says_so(client, researcher, ranked_sentiment, sentiment_task):
    client.force_login(researcher)

    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "March", "frozen": "1"})

    config = LeaderboardConfig.objects.get()
    assert config.missing_metric == MissingMetric.PER_MODEL
    assert [row["name"] for row in config.snapshot["rows"]] == ["beta", "alpha", "gamma"]
    html = client.get(response["Location"]).content.decode()
    assert "models without a metric: rank them on the metrics they have" in html


def test_an_unknown_choice_is_refused_on_every_surface(client, researcher, ranked_sentiment, sentiment_task):
    api = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"missing_metric": "ignore"})
    assert api.status_code == 400 and api.json()["field"] == "missing_metric"

    page = client.get(f"/tasks/{sentiment_task.code}/leaderboard/", {"missing_metric": "ignore"})
    assert page.status_code == 400 and "missing_metric must be" in page.content.decode()

    client.force_login(researcher)
    saved = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "x", "missing_metric": "ignore"})
    assert saved.status_code == 400 and "per_model or exclude_model" in saved.content.decode()
    assert LeaderboardConfig.objects.count() == 0


def test_the_api_reports_the_choice_applied(ranked_sentiment):
    body = APIClient().get("/api/v1/tasks/sentiment/leaderboard", {"missing_metric": "exclude_model"}).json()

    assert body["missing_metric"] == "exclude_model"
    assert body["rows"] == [] and {p["name"] for p in body["pending"]} == {"alpha", "beta", "gamma"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_the_fake_weight_into_the_field(sentiment_task):
    # given rows saved before the field existed, the choice hidden in the weights
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("leaderboard", "LeaderboardConfig")
    old.objects.create(task_id=sentiment_task.pk, slug="strict", name="strict",
                       metric_weights={"performance": 4, "throughput": 1, "_missing_metric": "exclude_model"})
    old.objects.create(task_id=sentiment_task.pk, slug="plain", name="plain", metric_weights={"performance": 4})
    old.objects.create(task_id=sentiment_task.pk, slug="odd", name="odd", metric_weights={"performance": 1, "_missing_metric": "?"})

    # when
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    # then
    configs = {c.slug: c for c in LeaderboardConfig.objects.all()}
    assert (configs["strict"].missing_metric, configs["strict"].metric_weights) == ("exclude_model", {"performance": 4, "throughput": 1})
    # 0004 gave them drop_metric, 0008 moved drop_metric to the per-model rule that replaced it
    assert (configs["plain"].missing_metric, configs["plain"].metric_weights) == ("per_model", {"performance": 4})
    assert (configs["odd"].missing_metric, configs["odd"].metric_weights) == ("per_model", {"performance": 1})
