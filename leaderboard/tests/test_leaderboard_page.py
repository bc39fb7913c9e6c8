"""The leaderboard page: published models ranked by Dynascore, live re-ranking, pending and anonymous models."""

import re

from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import answers, predictions_jsonl


def names_in_order(html: str) -> list[str]:
    return re.findall(r'<a href="/models/\d+/">([^<]+)</a>', html.split("<tbody>")[1].split("</tbody>")[0])


def test_it_ranks_published_models_by_dynascore(client, ranked_sentiment, sentiment_task):
    response = client.get(f"/tasks/{sentiment_task.code}/leaderboard/")
    assert response.status_code == 200
    html = response.content.decode()
    assert names_in_order(html) == ["beta", "alpha", "gamma"]
    # prediction files have no throughput/memory/robustness/fairness: the rule is shown, not a silent 0
    assert "measured for no ranked model" in html
    assert "[" in html and "]" in html  # bootstrap interval on performance
    assert 'hx-trigger="input changed delay:200ms, change"' in html
    assert "<svg" in html  # performance per round


def test_anonymous_models_hide_their_owner(client, ranked_sentiment, sentiment_task, outsider):
    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()
    assert outsider.username not in html
    assert "anonymous" in html


def test_dataset_weights_re_rank_the_table(client, ranked_sentiment, sentiment_task, sentiment_datasets):
    r1, r2 = sentiment_datasets
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/table/", {f"d_{r1.pk}": "5", f"d_{r2.pk}": "0", "w_performance": "4"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert names_in_order(response.content.decode()) == ["alpha", "beta", "gamma"]
    assert "<html" not in response.content.decode()  # a fragment


def test_any_column_sorts_the_table(client, ranked_sentiment, sentiment_task, sentiment_datasets):
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/table/", {"sort": "name", "dir": "asc"})
    assert names_in_order(response.content.decode()) == ["alpha", "beta", "gamma"]
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/table/", {"sort": f"dataset:{sentiment_datasets[1].pk}", "dir": "asc"})
    assert names_in_order(response.content.decode()) == ["gamma", "alpha", "beta"]


def test_a_bad_weight_is_refused_with_a_message(client, ranked_sentiment, sentiment_task):
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/table/", {"w_performance": "-2"})
    assert response.status_code == 400
    assert "must be at least 0" in response.content.decode()


def test_unpublished_models_are_not_shown_and_incomplete_ones_are_pending(client, ranked_sentiment, sentiment_task, researcher):
    ranked_sentiment["gamma"].published = False
    ranked_sentiment["gamma"].save()
    pending = submit_predictions(user=researcher, task=sentiment_task, name="in-progress",
                                 upload=predictions_jsonl([{**r, "dataset": "sentiment-r1-dev"} for r in answers(6)]
                                                          + [{"uid": f"r2-{i}", "label": "positive", "dataset": "sentiment-r2-dev"} for i in range(3)]))
    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()
    assert names_in_order(html) == ["beta", "alpha"]
    assert "gamma" not in html
    assert "in-progress" in html and "not evaluated yet" in html
    assert pending.pk
