"""Task owners register a model directory on the server from the admin; it is checked and queued."""

from tasks.models import MLModel
from tests.tiny_models import build_tiny_classifier


def test_an_owner_registers_a_directory_from_the_admin(client, admin_user, sentiment_task, sentiment_dataset, tiny_classifier_dir):
    client.force_login(admin_user)
    assert client.get("/admin/leaderboard/evaluationrun/register-model/").status_code == 200
    response = client.post("/admin/leaderboard/evaluationrun/register-model/", {
        "task": sentiment_task.pk, "name": "local", "path": str(tiny_classifier_dir), "published": "on",
    })
    model = MLModel.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/models/{model.pk}/"
    assert (model.path, model.status, model.kind) == (str(tiny_classifier_dir.resolve()), "queued", "hf_directory")


def test_a_refused_directory_shows_the_reason(client, admin_user, sentiment_task, tmp_path):
    client.force_login(admin_user)
    directory = build_tiny_classifier(tmp_path / "m", ["yes", "no", "maybe"])
    response = client.post("/admin/leaderboard/evaluationrun/register-model/", {"task": sentiment_task.pk, "name": "x", "path": str(directory)})
    assert response.status_code == 400 and "do not match the task" in response.content.decode()
    assert MLModel.objects.count() == 0


def test_only_task_owners_may_register(client, researcher, sentiment_task, tiny_classifier_dir):
    import pytest

    from dynabench.errors import NotAllowed
    from leaderboard.services import register_model_directory

    with pytest.raises(NotAllowed, match="Only owners"):
        register_model_directory(actor=researcher, task=sentiment_task, path=tiny_classifier_dir, name="x")
    assert MLModel.objects.count() == 0
