"""The round dashboard shows the transfer of its validated examples (the distribution, per annotator, per
model in the loop, per other model), and its button queues the transfer job (owners only)."""

import pytest

from annotation.models import TransferRate, TransferResult
from tasks.models import MLModel
from validation import transfer
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def rated(sentiment_task, annotator, owner):
    loop = MLModel.objects.create(task=sentiment_task, name="loop-model", path="loop", status=MLModel.Status.UPLOADED, published=True)
    other = MLModel.objects.create(task=sentiment_task, name="other-model", path="other", status=MLModel.Status.UPLOADED, published=True)
    examples = []
    for fooled in (0, 1, 1):
        example = make_example(sentiment_task, annotator, model=loop)
        record_validation(example=example, validator=owner, label="correct", mode="owner")
        TransferResult.objects.create(example=example, model=other, output={"label": "x"}, target=example.target, fooled=bool(fooled))
        TransferRate.objects.create(example=example, fooled=fooled, tried=1)
        examples.append(example)
    return examples


def test_the_owner_sees_the_distribution_and_the_breakdowns(sentiment_task, rated, owner, annotator, client):
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/rounds/1/dashboard").content.decode()

    assert "3 examples measured" in page and "2 fool at least one other model" in page
    assert '<tr data-bucket="none"><td data-label="Other models fooled">none</td><td data-label="Examples">1</td>' in page
    assert '<tr data-bucket="all"><td data-label="Other models fooled">all</td><td data-label="Examples">2</td>' in page
    assert f'data-annotator="{annotator.username}"' in page and "loop-model" in page
    assert '<td data-label="Examples put to it">3</td><td data-label="Fooled it">2 (66.7%)' in page


def test_the_button_queues_the_job_for_owners_only(sentiment_task, rated, owner, outsider, client, monkeypatch,
                                                    django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr(transfer, "enqueue_transfer", lambda round_id, *, model_ids=None: queued.append(round_id))
    round = sentiment_task.rounds.get(number=1)
    url = f"/tasks/{sentiment_task.code}/console/rounds/1/transfer"

    client.force_login(outsider)
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(url)
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(url)

    assert refused.status_code == 403 and client.get(url).status_code == 405
    assert done.status_code == 302 and queued == [round.pk]
