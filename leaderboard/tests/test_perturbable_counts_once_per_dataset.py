"""``perturbable_counts`` depends on the items, the task's kind and its config only: with the dataset's
checksum it is counted once per dataset in a process and reused for every other model scored on it,
and a changed config or dataset is counted anew."""

from leaderboard import scoring
from leaderboard.scoring import perturbable_counts

ITEMS = [{"uid": f"u{i}", "input": {"text": f"She said the film was good, said Mary {i}."}, "target": {"label": "positive"}, "tag": None}
         for i in range(5)]


def test_counted_once_per_dataset_and_anew_when_the_dataset_or_config_changes(sentiment_task, monkeypatch):
    counted = []
    real = scoring._count_perturbable
    monkeypatch.setattr(scoring, "_count_perturbable", lambda task, items: counted.append(len(items)) or real(task, items))
    monkeypatch.setattr(scoring, "_COUNTED", {})

    first = perturbable_counts(sentiment_task, ITEMS, dataset_checksum="a" * 64)
    again = perturbable_counts(sentiment_task, ITEMS, dataset_checksum="a" * 64)
    assert first == again == real(sentiment_task, ITEMS) and first["fairness"] > 0
    assert counted == [5]

    perturbable_counts(sentiment_task, ITEMS[:2], dataset_checksum="b" * 64)  # another dataset
    sentiment_task.config = {**sentiment_task.config, "instructions": "changed"}
    perturbable_counts(sentiment_task, ITEMS, dataset_checksum="a" * 64)  # another config
    perturbable_counts(sentiment_task, ITEMS)  # no checksum: never cached
    assert counted == [5, 2, 5, 5]
