"""A frozen snapshot is a permanent URL and a JSON download with the provenance of every score:
datasets with version, sha256 and item count, runs with model and dataset checksums and the code version."""

from leaderboard.models import EvaluationRun, LeaderboardConfig


def test_a_frozen_snapshot_downloads_as_json_with_its_provenance(client, researcher, ranked_sentiment, sentiment_task):
    client.force_login(researcher)
    response = client.post(f"/tasks/{sentiment_task.code}/leaderboard/save/", {"name": "March", "frozen": "1"})
    config = LeaderboardConfig.objects.get()
    EvaluationRun.objects.update(performance=0.0)  # later changes never touch a snapshot

    page = client.get(response["Location"]).content.decode()
    body = client.get(f"/leaderboards/{config.slug}.json").json()

    assert f"/leaderboards/{config.slug}.json" in page and 'id="provenance"' in page
    provenance = body["snapshot"]["provenance"]
    assert body["frozen"] and body["url"].endswith(f"/leaderboards/{config.slug}/")
    assert [r["name"] for r in body["snapshot"]["rows"]] == ["beta", "alpha", "gamma"]
    datasets = {d["name"]: d for d in provenance["datasets"]}
    assert set(datasets) == {"sentiment-r1-dev", "sentiment-r2-dev"} and datasets["sentiment-r1-dev"]["version"] == 1
    run = provenance["runs"][0]
    assert run["dataset_checksum"] and run["model_checksum"] and run["code_version"] == provenance["code_version"]
    assert len(provenance["runs"]) == 6
