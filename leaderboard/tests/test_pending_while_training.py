"""A published model still training is listed as pending "in training" with its progress, and the
table polls for updates while anything is pending; a filled leaderboard stops polling."""

from tasks.models import MLModel


def test_a_training_model_is_pending_with_its_progress_and_the_table_polls(client, ranked_sentiment, sentiment_task):
    MLModel.objects.create(task=sentiment_task, name="minilm-seed", published=True, status=MLModel.Status.TRAINING, progress=0.3)

    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()

    pending = html.split("<h3>Not ranked yet</h3>")[1]
    assert "minilm-seed</a>: in training (30%); evaluated on every scoring dataset once trained" in pending
    assert 'id="pending-poll"' in pending and 'hx-trigger="every 10s"' in pending
    assert f'hx-post="/tasks/{sentiment_task.code}/leaderboard/table/"' in pending


def test_nothing_pending_nothing_polls(client, ranked_sentiment, sentiment_task):
    html = client.get(f"/tasks/{sentiment_task.code}/leaderboard/").content.decode()

    assert "<h3>Not ranked yet</h3>" not in html and "pending-poll" not in html
