"""The round page links each dataset's JSONL and Croissant description, and (for owners) the round
export's Croissant description beside the export; every link answers."""

import re

from django.test import Client

from tasks.data.seed import seed_scoring_datasets


def test_the_round_page_links_the_croissant_descriptions(sentiment_task, owner, annotator):
    for dataset in seed_scoring_datasets(sentiment_task):
        dataset.round = sentiment_task.rounds.get(number=1)
        dataset.save(update_fields=["round"])
    owner_browser, annotator_browser = Client(), Client()
    owner_browser.force_login(owner)
    annotator_browser.force_login(annotator)

    as_owner = owner_browser.get("/tasks/sentiment/rounds/1/").content.decode()
    as_annotator = annotator_browser.get("/tasks/sentiment/rounds/1/").content.decode()

    links = re.findall(r'href="([^"]+(?:croissant\.json|download\.jsonl))"', as_owner)
    assert len([link for link in links if link.startswith("/api/v1/datasets/")]) == 4  # JSONL and Croissant of dev and test
    assert "/tasks/sentiment/rounds/1/croissant.json" in links
    assert all(owner_browser.get(link).status_code == 200 for link in links)
    assert "/tasks/sentiment/rounds/1/croissant.json" not in as_annotator
    assert "/api/v1/datasets/" in as_annotator
