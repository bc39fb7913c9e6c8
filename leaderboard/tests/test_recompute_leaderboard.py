"""recompute_leaderboard caches every model's scores per scoring dataset and bootstrap replicates; reruns replace."""

import numpy as np

from leaderboard.jobs import recompute_leaderboard
from leaderboard.models import LeaderboardCache
from leaderboard.selectors import _replicates


def test_it_caches_scores_in_percent_and_replicates(ranked_sentiment, sentiment_task, sentiment_datasets):
    cache = LeaderboardCache.objects.get(task=sentiment_task)
    rows = {row["name"]: row for row in cache.rows}
    r1, r2 = (str(d.pk) for d in sentiment_datasets)
    assert rows["alpha"]["scores"][r1]["performance"] == 100.0
    assert round(rows["beta"]["scores"][r1]["performance"], 4) == round(100 * 4 / 6, 4)
    assert rows["gamma"]["scores"][r2]["performance"] == 0.0
    assert rows["beta"]["scores"][r1]["throughput"] is None
    assert [d["name"] for d in cache.datasets] == ["sentiment-r1-dev", "sentiment-r2-dev"]
    reps = _replicates(cache)
    assert reps.shape == (1000, 3, 2)
    assert np.all(reps[:, [r["name"] for r in cache.rows].index("alpha"), 0] == 100)


def test_it_is_idempotent(ranked_sentiment, sentiment_task):
    first = LeaderboardCache.objects.get(task=sentiment_task)
    summary = recompute_leaderboard(sentiment_task.pk)
    assert summary == "leaderboard of sentiment: 3 models × 2 scoring datasets, 1000 bootstrap resamples"
    again = LeaderboardCache.objects.get(task=sentiment_task)
    assert LeaderboardCache.objects.count() == 1
    assert again.rows == first.rows and bytes(again.replicates) == bytes(first.replicates)
