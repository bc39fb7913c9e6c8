"""From the console's "New task" page, someone allowed to add tasks uploads a definition file:
the task is created with round 1 open and the file's contexts, and they are its owner
(``tasks.data.seed.create_task_from_definition``). Without the permission the page is a 403; a taken
code, a file that is not JSON, a config its kind refuses and a definition without its config are refused with
the reason on its line (the same check as a task proposal's, ``tasks.data.definitions``)."""

import json

from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.models import Task
from tasks.data.seed import load_task_definition


def _file(content: bytes, name="task.json"):
    return SimpleUploadedFile(name, content, content_type="application/json")


def _definition(code="reviews") -> bytes:
    spec = load_task_definition("sentiment")
    spec.update(code=code, name="Hotel reviews")
    return json.dumps(spec).encode()


def _creator(annotator):
    annotator.user_permissions.add(Permission.objects.get(codename="add_task", content_type__app_label="tasks"))
    return annotator


def test_a_definition_file_makes_a_task_the_uploader_owns(client, annotator, db):
    client.force_login(_creator(annotator))
    assert b"data-new-task" in client.get("/console/").content

    response = client.post("/console/new", {"definition": _file(_definition())})

    assert response.status_code == 302 and response["Location"] == "/tasks/reviews/console/rounds/"
    task = Task.objects.get(code="reviews")
    assert task.is_owner(annotator)
    assert task.current_round().number == 1 and task.current_round().contexts.count() == 5
    assert "with round 1 open and 5 context(s)" in client.get(response["Location"]).content.decode()


def test_only_people_allowed_to_add_tasks_may(client, annotator, db):
    client.force_login(annotator)

    assert client.get("/console/new").status_code == 403
    assert client.post("/console/new", {"definition": _file(_definition())}).status_code == 403
    assert not Task.objects.filter(code="reviews").exists()


def test_a_taken_code_a_broken_file_and_a_missing_config_are_refused(client, annotator, sentiment_task):
    client.force_login(_creator(annotator))
    missing = json.loads(_definition("other"))
    del missing["config"]

    for content, reason in (
        (_definition("sentiment"), "a task with code &#x27;sentiment&#x27; exists already"),
        (b"{not json", "line 1: not valid JSON"),
        (b'{"code": "other",\n "name": "Other",\n "kind": "classification",\n "instructions": "",\n "config": {"labels": 7}}', "line 5: config.labels"),
        (json.dumps(missing).encode(), "line 1: the definition lacks &#x27;config&#x27;"),
    ):
        response = client.post("/console/new", {"definition": _file(content)})
        assert response.status_code == 400 and reason in response.content.decode()
    assert not Task.objects.filter(code="other").exists()
