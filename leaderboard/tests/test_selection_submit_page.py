"""The submit page of a data-centric task takes a selection (a text file of pool uids, one per line)
and nothing else; a bad selection is shown next to the upload field, naming the first offender."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.tests.conftest import make_dataset
from tasks.models import MLModel, Task

CONFIG = {
    "labels": ["positive", "negative"], "context_fields": [], "input_fields": [{"name": "text"}], "model_inputs": ["text"],
    "model_wrong": {"rule": "label_differs"}, "perf_metric": "accuracy", "data_centric": {"pool": "pool", "budget": 2},
}


@pytest.fixture
def page(db, client, researcher):
    task = Task.objects.create(code="select", name="Select", kind="data_centric", collecting=False, config=CONFIG)
    make_dataset(task, "pool", [(f"p{i}", {"text": f"text {i}"}, {"label": "positive"}, "") for i in range(3)],
                 round_number=None, access="standard")
    client.force_login(researcher)
    return reverse("leaderboard:submit", args=["select"])


def _post(client, url, body: bytes, name="mine"):
    return client.post(url, {"kind": "selection", "name": name, "upload": SimpleUploadedFile("uids.txt", body), "published": "on"})


def test_it_offers_only_a_selection(page, client):
    html = client.get(page).content.decode()
    assert 'value="selection"' in html and 'value="archive"' not in html and 'value="predictions"' not in html
    assert "<code>pool</code>" in html and "at most 2 of them" in html


def test_a_selection_file_is_submitted(page, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        response = _post(client, page, b"p0\n\np2\n")
    model = MLModel.objects.get(name="mine")
    assert response.status_code == 302 and model.training_info["selection"] == ["p0", "p2"]


def test_a_bad_selection_is_shown_next_to_the_upload(page, client):
    response = _post(client, page, b"p0\nnope\n")
    assert response.status_code == 400
    assert "Entry 2: &#x27;nope&#x27; is not in the pool &#x27;pool&#x27;" in response.content.decode()
    assert not MLModel.objects.exists()
