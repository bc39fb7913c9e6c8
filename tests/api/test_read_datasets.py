"""Datasets are listed for everyone and their items downloaded according to their label visibility."""

from rest_framework.test import APIClient


def test_it_lists_a_rounds_datasets_with_item_counts(sentiment_datasets):
    response = APIClient().get("/api/v1/datasets", {"task": "sentiment", "round": 1})

    assert response.status_code == 200
    rows = response.json()["results"]
    assert [(d["name"], d["access"], d["item_count"], d["label_visibility"], d["labels_hidden"]) for d in rows] == [
        ("sent-r1-dev", "scoring", 3, "public", False),
        ("sent-r1-test", "scoring", 3, "hidden", True),
    ]


def test_it_filters_datasets_by_label_visibility(sentiment_datasets):
    response = APIClient().get("/api/v1/datasets", {"labels": "hidden"})

    assert [d["name"] for d in response.json()["results"]] == ["sent-r1-test"]


def test_it_downloads_a_scoring_datasets_items_with_labels(sentiment_datasets):
    dataset = sentiment_datasets["scoring"]

    response = APIClient().get(f"/api/v1/datasets/{dataset.pk}/items")

    assert response.status_code == 200
    first = response.json()["results"][0]
    assert first == {
        "uid": "sent-r1-dev-0", "input": {"text": "sent-r1-dev sentence 0"}, "target": {"label": "positive"},
        "tag": "", "metadata": {"gold_votes": ["positive"] * 5},
    }


def test_it_pages_items_with_a_capped_page_size(sentiment_datasets):
    dataset = sentiment_datasets["scoring"]

    page = APIClient().get(f"/api/v1/datasets/{dataset.pk}/items", {"page_size": 2, "page": 2}).json()
    capped = APIClient().get(f"/api/v1/datasets/{dataset.pk}/items", {"page_size": 10**9}).json()

    assert page["count"] == 3 and [i["uid"] for i in page["results"]] == ["sent-r1-dev-2"]
    assert len(capped["results"]) == 3


def test_it_refuses_a_non_numeric_round_filter(sentiment_datasets):
    response = APIClient().get("/api/v1/datasets", {"round": "one"})

    assert response.status_code == 400
    assert response.json()["detail"] == "round: Must be a whole number, not 'one'."
