"""Saved weight sets ("forks") have a shareable URL and stay live; frozen snapshots never change."""

from leaderboard.models import LeaderboardConfig
from leaderboard.tests.test_leaderboard_page import names_in_order


def test_a_fork_keeps_its_weights_behind_a_shareable_url(client, researcher, ranked_sentiment, sentiment_task, sentiment_datasets):
    r1, r2 = sentiment_datasets
    client.force_login(researcher)
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "round 1 only", f"d_{r1.pk}": "5", f"d_{r2.pk}": "0"})
    config = LeaderboardConfig.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/leaderboards/{config.slug}/"
    assert (config.owner, config.frozen, config.dataset_weights) == (researcher, False, {str(r1.pk): 5.0, str(r2.pk): 0.0})
    client.logout()
    html = client.get(response["Location"]).content.decode()  # anyone with the link
    assert "round 1 only" in html
    assert names_in_order(html) == ["alpha", "beta", "gamma"]


def test_a_snapshot_is_frozen(client, researcher, ranked_sentiment, sentiment_task):
    client.force_login(researcher)
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "March", "frozen": "1"})
    config = LeaderboardConfig.objects.get()
    assert config.frozen and [row["name"] for row in config.snapshot["rows"]] == ["beta", "alpha", "gamma"]
    ranked_sentiment["beta"].published = False
    ranked_sentiment["beta"].save()
    html = client.get(response["Location"]).content.decode()
    assert "frozen" in html and html.index("beta") < html.index("alpha") < html.index("gamma")


def test_saving_needs_a_login_and_a_name(client, researcher, ranked_sentiment, sentiment_task):
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "x"})
    assert response.status_code == 302 and "/login" in response["Location"]
    client.force_login(researcher)
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": ""})
    assert response.status_code == 400 and "Give the saved leaderboard a name" in response.content.decode()
    assert LeaderboardConfig.objects.count() == 0
