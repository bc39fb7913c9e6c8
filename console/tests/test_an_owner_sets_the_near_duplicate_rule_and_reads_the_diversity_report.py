"""An owner sets a round's near-duplicate rule and reads its diversity report on the console; the round
dashboard shows the Vendi score; anyone else is refused."""

from django.core.cache import cache

import pytest

from annotation.diversity import rules
from annotation.diversity_models import RoundDiversity, RoundSimilarity


@pytest.fixture(autouse=True)
def fresh_rules():
    """The rule is read through the cache (Redis), which outlives a test's database."""
    cache.clear()
    yield
    cache.clear()


def _url(task, round):
    return f"/tasks/{task.code}/console/rounds/{round.number}/diversity/"


def test_the_owner_saves_the_rule(client, owner, sentiment_task):
    round = sentiment_task.current_round()
    client.force_login(owner)
    response = client.post(_url(sentiment_task, round), {"action": "rule", "threshold": "0.85", "mode": "refuse"})
    assert response.status_code == 302
    stored = RoundSimilarity.objects.get(round=round)
    assert (stored.threshold, stored.mode) == (0.85, "refuse")
    assert rules.round_rule(round).mode == "refuse"


def test_a_threshold_above_one_is_refused(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post(_url(sentiment_task, sentiment_task.current_round()), {"action": "rule", "threshold": "1.5", "mode": "warn"})
    assert response.status_code == 400
    assert not RoundSimilarity.objects.exists()


def test_the_report_and_the_dashboard_show_the_vendi_score(client, owner, annotator, sentiment_task):
    round = sentiment_task.current_round()
    RoundDiversity.objects.create(round=round, status="done", figures={
        "examples": 40, "vendi": 12.34, "vendi_low": 10.0, "vendi_high": 11.5, "distinct_1": 0.5, "distinct_2": 0.8,
        "self_bleu": 20.0, "per_author": [{"author_id": annotator.pk, "examples": 6, "vendi": 2.5}], "threshold": 0.9, "near_duplicate_pairs": 3, "pairs": [], "lexical_pairs": 1,
        "fooling_examples": 12, "noise": 2, "assigned": {},
        "clusters": [{"cluster": 0, "size": 10, "share": 0.83, "terms": ["soup", "cold"], "examples": [[7, "The soup was cold."]],
                      "assigned": 20, "vmer": 0.5}],
    })
    client.force_login(owner)
    page = client.get(_url(sentiment_task, round)).content.decode()
    dashboard = client.get(f"/tasks/{sentiment_task.code}/console/rounds/{round.number}/dashboard").content.decode()
    assert "12.3" in page and "soup, cold" in page and "#7 The soup was cold." in page
    assert f">{annotator.username}</a></td><td>6</td><td>2.5</td>" in page
    assert "Vendi score 12.3" in dashboard and "3 near-duplicate pairs" in dashboard


def test_compute_marks_the_report_queued(client, owner, sentiment_task):
    round = sentiment_task.current_round()
    client.force_login(owner)
    response = client.post(_url(sentiment_task, round), {"action": "compute"})
    assert response.status_code == 302
    assert RoundDiversity.objects.get(round=round).status == "queued"


def test_an_outsider_is_refused(client, outsider, sentiment_task):
    client.force_login(outsider)
    assert client.get(_url(sentiment_task, sentiment_task.current_round())).status_code == 403
