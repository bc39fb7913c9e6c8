"""A researcher's endpoint submission says whether the task's owners may put it in an annotation
loop (``loop_allowed``, off by default); the record keeps it and the model's API answer shows it to
the researcher and the task's owners, never to anyone else."""

from tasks.models import MLModel
from tests.api.conftest import client_for


def _submit(user, url, **extra):
    return client_for(user).post("/api/v1/models/endpoint", {
        "task": "sentiment", "name": extra.pop("name"), "base_url": url, "model_name": "tiny-gpt2", **extra,
    }, format="json")


def test_consent_is_off_by_default_and_kept_when_given(researcher, owner, outsider, sentiment_task, endpoint_server, default_queue, settings):
    settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR = 0
    plain = _submit(researcher, endpoint_server.url, name="plain")
    allowed = _submit(researcher, endpoint_server.url, name="allowed", loop_allowed=True, published=True)

    assert plain.status_code == allowed.status_code == 201
    assert plain.json()["loop_allowed"] is False and allowed.json()["loop_allowed"] is True
    assert MLModel.objects.get(pk=plain.json()["id"]).endpoint.loop_allowed is False
    assert MLModel.objects.get(pk=allowed.json()["id"]).endpoint.loop_allowed is True
    model_id = allowed.json()["id"]
    assert client_for(owner).get(f"/api/v1/models/{model_id}").json()["loop_allowed"] is True
    assert client_for(outsider).get(f"/api/v1/models/{model_id}").json()["loop_allowed"] is None
