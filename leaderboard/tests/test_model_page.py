"""The model page: card, per-dataset and per-tag scores, live status, and what only the owner may do."""

from leaderboard.jobs import evaluate_model
from leaderboard.tests.conftest import evaluate_now


def test_it_polls_the_status_while_runs_are_unfinished_and_stops_when_done(client, researcher, submitted_model, sentiment_dataset):
    client.force_login(researcher)
    sentiment_dataset.label_visibility = "public"  # per-tag scores of small tags are shown on public sets only
    sentiment_dataset.save(update_fields=["label_visibility"])
    evaluate_model(submitted_model.pk)
    html = client.get(f"/models/{submitted_model.pk}/").content.decode()
    assert 'hx-trigger="every 2s"' in html and "queued" in html
    assert "<strong>tiny</strong>" in html  # the Markdown model card
    evaluate_now(submitted_model)
    fragment = client.get(f"/models/{submitted_model.pk}/status/").content.decode()
    assert "every 2s" not in fragment and "done" in fragment and "Evaluated" in fragment
    assert "Per tag" in fragment and "service" in fragment


def test_the_model_card_is_rendered_safely(client, researcher, submitted_model):
    submitted_model.description = "Hi <script>alert(1)</script> [x](javascript:alert(2))"
    submitted_model.save()
    html = client.get(f"/models/{submitted_model.pk}/").content.decode()
    assert "<script>alert(1)" not in html and "javascript:" not in html


def test_only_the_owner_downloads_predictions(client, researcher, outsider, submitted_model, sentiment_dataset):
    evaluate_now(submitted_model)
    run = submitted_model.evaluation_runs.get()
    url = f"/models/{submitted_model.pk}/runs/{run.pk}/predictions/"
    client.force_login(outsider)
    assert client.get(url).status_code == 403
    client.logout()
    assert client.get(url).status_code == 403
    client.force_login(researcher)
    response = client.get(url)
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 6 and '"uid": "s1"' in lines[0]


def test_the_owner_publishes_and_anonymises(client, researcher, outsider, submitted_model, django_capture_on_commit_callbacks):
    submitted_model.published = False
    submitted_model.save()
    assert client.get(f"/models/{submitted_model.pk}/").status_code == 404  # unpublished: hidden from others
    client.force_login(outsider)
    assert client.post(f"/models/{submitted_model.pk}/visibility/", {"published": "1"}).status_code == 404
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(f"/models/{submitted_model.pk}/visibility/", {"published": "1"})
    assert response.status_code == 302 and len(callbacks) == 1  # the leaderboard is recomputed
    client.post(f"/models/{submitted_model.pk}/visibility/", {"anonymous": "1"})
    submitted_model.refresh_from_db()
    assert submitted_model.published and submitted_model.anonymous
    client.force_login(outsider)
    assert client.post(f"/models/{submitted_model.pk}/visibility/", {"published": "0"}).status_code == 403
    html = client.get(f"/models/{submitted_model.pk}/").content.decode()
    assert researcher.username not in html and "anonymous" in html
