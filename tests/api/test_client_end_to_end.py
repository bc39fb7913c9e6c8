"""The Python client against a live server, as a researcher's script would use it: download
round 1, write an example and read whether it fooled the model, submit a model and read its
results once a worker has evaluated it."""

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token

from dynabench_client import DynabenchClient, RateLimited
from tests.api.conftest import run_worker


@pytest.fixture
def researcher_who_annotates(db):
    user = User.objects.create_user(username="ria", password="pw-ria")
    user.groups.add(*Group.objects.filter(name__in=["annotator", "researcher"]))
    return user


def test_a_script_downloads_writes_submits_and_reads_results(
    live_server, researcher_who_annotates, sentiment_datasets, sentiment_model, tiny_classifier_dir
):
    client = DynabenchClient(api_key=Token.objects.create(user=researcher_who_annotates).key, base_url=live_server.url)

    rows = client.download_round("sentiment", 1)
    example = client.create_example("sentiment", text="The room was clean, the staff less so.", label="negative")
    model_id = client.submit_model(model_path=tiny_classifier_dir, task="sentiment", description="tiny BERT")
    queued = client.get_results(model_id)  # as the server answered: checked, not yet unpacked
    run_worker()
    results = client.get_results(model_id)

    assert [r["source"] for r in rows] == ["sent-r1-dev"] * 3
    assert example["model_wrong"] == (example["model_output"]["label"] != "negative")
    assert queued["status"] == "unpacking" and queued["dynascore"] is None  # a job unpacks it, then queues it
    assert results["status"] == "evaluated"
    assert results["datasets"]["sent-r1-dev"]["status"] == "done"
    assert results["round1_acc"] == pytest.approx(results["datasets"]["sent-r1-dev"]["performance"])
    assert results["dynascore"] is not None
    assert client.leaderboard("sentiment", weights={"performance": 5})["rows"][0]["model_id"] in (model_id, sentiment_model.pk)
    assert client.me()["examples"]["collected"] == 1


def test_the_daily_model_limit_raises_rate_limited_with_the_servers_message(
    live_server, researcher_who_annotates, sentiment_datasets, tiny_classifier_dir, settings
):
    settings.MODEL_SUBMISSIONS_PER_DAY = 1
    client = DynabenchClient(api_key=Token.objects.create(user=researcher_who_annotates).key, base_url=live_server.url)
    client.submit_model(model_path=tiny_classifier_dir, task="sentiment")

    with pytest.raises(RateLimited) as error:
        client.submit_model(model_path=tiny_classifier_dir, task="sentiment")

    assert error.value.code == "daily_limit"
    assert "the daily limit is 1" in error.value.detail
