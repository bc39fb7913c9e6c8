"""A saved weight set gets a random slug that fits its column on every database."""

from leaderboard.models import LeaderboardConfig


def test_it_gives_each_config_a_short_unique_slug(sentiment_task):
    first = LeaderboardConfig.objects.create(task=sentiment_task, name="a", metric_weights={"performance": 4})
    second = LeaderboardConfig.objects.create(task=sentiment_task, name="b", metric_weights={"performance": 4})

    assert len(first.slug) == 16 and first.slug != second.slug
