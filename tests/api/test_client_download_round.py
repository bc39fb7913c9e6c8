"""``DynabenchClient.download_round`` returns a round's non-hidden data, over HTTP."""

import json

from rest_framework.authtoken.models import Token

from dynabench_client import DynabenchClient


def test_it_downloads_the_rounds_scoring_items_and_leaves_hidden_ones_out(live_server, researcher, sentiment_datasets, tmp_path):
    client = DynabenchClient(api_key=Token.objects.create(user=researcher).key, base_url=live_server.url)

    rows = client.download_round("sentiment", 1, path=tmp_path / "r1.jsonl")

    assert [(r["source"], r["uid"], r["target"]) for r in rows] == [
        ("sent-r1-dev", "sent-r1-dev-0", {"label": "positive"}),
        ("sent-r1-dev", "sent-r1-dev-1", {"label": "negative"}),
        ("sent-r1-dev", "sent-r1-dev-2", {"label": "neutral"}),
    ]
    written = [json.loads(line) for line in (tmp_path / "r1.jsonl").read_text().splitlines()]
    assert written == rows


def test_it_follows_pages(live_server, researcher, sentiment_datasets, monkeypatch):
    client = DynabenchClient(api_key=Token.objects.create(user=researcher).key, base_url=live_server.url)
    original = client._pages
    monkeypatch.setattr(client, "_pages", lambda path, params=None, page_size=500: original(path, params, page_size=1))

    rows = client.download_round("sentiment", 1)

    assert [r["uid"] for r in rows] == ["sent-r1-dev-0", "sent-r1-dev-1", "sent-r1-dev-2"]
