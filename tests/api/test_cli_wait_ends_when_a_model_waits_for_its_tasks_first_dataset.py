"""``dynabench wait`` on a model directory of a task with no dataset yet (a task just approved) ends at
once with exit status 9 ("not evaluated yet") and says why, rather than polling until it times out:
nothing will happen until the task gets a dataset. The API says so in ``waiting_for_dataset``."""

from rest_framework.authtoken.models import Token

from tasks.models import MLModel
from tests.api.conftest import client_for
from tests.cli_support import dynabench


def test_wait_ends_when_the_model_waits_for_a_dataset(live_server, researcher, sentiment_task, tmp_path):
    assert not sentiment_task.datasets.exists()
    token = Token.objects.create(user=researcher).key
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="early", status=MLModel.Status.UPLOADED)

    detail = client_for(researcher).get(f"/api/v1/models/{model.pk}").json()
    waited = dynabench("wait", model.pk, "--timeout", "600", url=live_server.url, token=token, config=tmp_path / "config.json")

    assert detail["waiting_for_dataset"] is True and detail["failure_reason"] == ""
    assert waited.returncode == 9 and "no dataset yet" in waited.stdout
