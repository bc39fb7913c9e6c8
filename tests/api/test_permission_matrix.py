"""Who may call what: every API operation × every kind of user, with the expected status.

Each row is ``(method, path template, body, prepare, expected)`` (a callable body is built
from the world; one marked ``multipart`` is sent as multipart); ``expected`` lists the
status for, in order: anonymous, annotator, validator, researcher, owner of another task
(``nli``), owner of the task (``sentiment``), admin. A test checks that the table covers
every operation of the OpenAPI schema, so a new endpoint cannot go without a row.
"""

import io
import json
import shutil

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotation.models import Example, ValidationState
from tasks.models import Context, Dataset, DatasetItem, MLModel, Round, Task
from tasks.data.uploads import store_upload
from tests.api.conftest import client_for, tar_gz
from validation.queue import LEASE_DURATION

ROLES = ("anonymous", "annotator", "validator", "researcher", "other_owner", "owner", "admin")


def _close_round_one(world):
    Round.objects.filter(task=world["task"], number=1).update(status=Round.Status.CLOSED)


def _ten_validated_examples(world):
    """Enough verified-correct examples for every split of a close (8/1/1 at the default ratios)."""
    for i in range(10):
        Example.objects.create(
            round=world["context"].round, context=world["context"], author=world["example"].author, input={"text": f"v{i}"},
            target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True,
            validation_state=ValidationState.VERIFIED_CORRECT,
        )


def _context_file(world):
    """A multipart body: one new context as a JSONL file."""
    upload = io.BytesIO(b'{"uid": "matrix-1", "prompt": "The bus was on time."}')
    upload.name = "contexts.jsonl"
    return {"file": upload}


_context_file.multipart = True


def _new_example(world):
    return {"context": world["context"].pk, "input": {"text": "Lovely rooms, awful breakfast."}, "target": {"label": "negative"}}


def _archive(world):
    return {"task": "sentiment", "name": "matrix-model", "archive": tar_gz(world["model"].path)}


_archive.multipart = True


def _predictions(world):
    lines = [{"dataset": item.dataset.name, "uid": item.uid, "label": "positive"} for item in DatasetItem.objects.filter(dataset__access="scoring")]
    upload = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    upload.name = "predictions.jsonl"
    return {"task": "sentiment", "name": "matrix-predictions", "predictions": upload}


_predictions.multipart = True


def _unpublish_model(world):
    MLModel.objects.filter(pk=world["model"].pk).update(published=False)


def _console_file(world):
    """A multipart body: a contexts file for round 1, uploaded through the console's API."""
    upload = io.BytesIO(b"uid,prompt\nconsole-1,The tram was late again.\n")
    upload.name = "contexts.csv"
    return {"file": upload, "target": "contexts", "round": 1}


_console_file.multipart = True


def _audio_file(world):
    """A multipart body: one WAV clip for round 1 (sentiment has no audio field: an owner is told so, 400)."""
    import numpy as np
    import soundfile

    upload = io.BytesIO()
    soundfile.write(upload, np.zeros(1600, dtype="float32"), 16000, format="WAV")
    upload.seek(0)
    upload.name = "clip.wav"
    return {"files": upload, "round": 1}


_audio_file.multipart = True


def _image_file(world):
    """A multipart body: one PNG for round 1 (sentiment has no image field: an owner is told so, 400)."""
    from tests.image_support import draw, encode

    upload = io.BytesIO(encode(draw()))
    upload.name = "picture.png"
    return {"files": upload, "round": 1}


_image_file.multipart = True


def _verdict(world):
    return {"example": world["example"].pk, "label": "correct"}


def _lease_to_caller(world, user):
    """The review queue hands the example to the caller first: a verdict is taken only on a leased example."""
    if user is not None:
        Example.objects.filter(pk=world["example"].pk).update(leased_to=user, leased_until=timezone.now() + LEASE_DURATION)


_lease_to_caller.per_user = True


ALL_200 = (200,) * 7
ALL_405 = (405,) * 7
SIGNED_IN_200 = (401, 200, 200, 200, 200, 200, 200)
OWNERS_ONLY_READ = (401, 403, 403, 403, 403, 200, 200)

MATRIX = [
    # method, path, body, prepare, (anonymous, annotator, validator, researcher, other_owner, owner, admin)
    ("GET", "/api/v1/auth/token", None, None, ALL_405),
    ("POST", "/api/v1/auth/token", {}, None, SIGNED_IN_200),
    ("DELETE", "/api/v1/auth/token", None, None, (401, 204, 204, 204, 204, 204, 204)),
    ("GET", "/api/v1/me", None, None, SIGNED_IN_200),
    ("POST", "/api/v1/me", {}, None, (401, 405, 405, 405, 405, 405, 405)),
    ("GET", "/api/v1/tasks", None, None, ALL_200),
    ("POST", "/api/v1/tasks", {"code": "x"}, None, ALL_405),
    ("GET", "/api/v1/tasks/{task_code}", None, None, ALL_200),
    ("PUT", "/api/v1/tasks/{task_code}", {"name": "x"}, None, ALL_405),
    ("DELETE", "/api/v1/tasks/{task_code}", None, None, ALL_405),
    ("GET", "/api/v1/tasks/{task_code}/rounds", None, None, ALL_200),
    ("POST", "/api/v1/tasks/{task_code}/rounds", lambda w: {"target_models": [w["model"].pk]}, _close_round_one,
     (401, 403, 403, 403, 403, 201, 201)),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}", None, None, ALL_200),
    ("DELETE", "/api/v1/tasks/{task_code}/rounds/{round_number}", None, None, (401, 403, 403, 403, 403, 405, 405)),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/contexts", None, None, OWNERS_ONLY_READ),
    ("POST", "/api/v1/tasks/{task_code}/rounds/{round_number}/contexts", _context_file, None, (401, 403, 403, 403, 403, 201, 201)),
    ("GET", "/api/v1/tasks/{task_code}/context", None, None, (401, 200, 403, 403, 200, 200, 200)),
    # text-to-image red-teaming: sentiment generates no images, so whoever may write is refused with
    # not_text_to_image (400), a judgment's forged state with chat_expired (400); never a 5xx
    ("POST", "/api/v1/tasks/{task_code}/imagine", {"prompt": "a cat on a mat"}, None, (401, 400, 403, 403, 400, 400, 400)),
    ("POST", "/api/v1/tasks/{task_code}/imagine/judgments", {"state": "forged", "images": [], "prompt_looked_safe": True}, None,
     (401, 400, 403, 403, 400, 400, 400)),
    # conversations: sentiment has none, so whoever may write is refused with not_conversational (400)
    ("POST", "/api/v1/tasks/{task_code}/chat", {"accept_content_warning": True}, None, (401, 400, 403, 403, 400, 400, 400)),
    ("POST", "/api/v1/tasks/{task_code}/chat/turns", {"state": "forged", "prompt": "hello"}, None, (401, 400, 403, 403, 400, 400, 400)),
    ("POST", "/api/v1/tasks/{task_code}/chat/judgments", {"state": "forged", "verdict": "holds"}, None, (401, 400, 403, 403, 400, 400, 400)),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/close/preview", None, None, (401, 403, 403, 403, 403, 200, 200)),
    ("POST", "/api/v1/tasks/{task_code}/rounds/{round_number}/close", {}, _ten_validated_examples, (401, 403, 403, 403, 403, 200, 200)),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/examples", None, None, OWNERS_ONLY_READ),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/examples", None, _close_round_one, ALL_200),
    # the round's AI validator: owners only, whether or not a judge is set (none is here)
    ("GET", "/api/v1/rounds/{round_id}/judge", None, None, OWNERS_ONLY_READ),
    # the round's diversity report: owners only, whether or not one was computed (none is here)
    ("GET", "/api/v1/rounds/{round_id}/diversity", None, None, OWNERS_ONLY_READ),
    # dataset releases are public; sentiment has published none, so a version is 404 for everyone
    ("GET", "/api/v1/tasks/{task_code}/releases", None, None, ALL_200),
    ("GET", "/api/v1/tasks/{task_code}/releases/{version}", None, None, (404,) * 7),
    ("GET", "/api/v1/examples", None, None, SIGNED_IN_200),
    ("POST", "/api/v1/examples", _new_example, None, (401, 201, 403, 403, 201, 201, 201)),
    ("GET", "/api/v1/examples/{id}", None, None, (401, 200, 404, 404, 404, 200, 200)),
    ("DELETE", "/api/v1/examples/{id}", None, None, (401, 405, 405, 405, 405, 405, 405)),
    ("POST", "/api/v1/examples/{id}/retract", None, None, (401, 200, 404, 404, 404, 403, 403)),
    ("POST", "/api/v1/examples/{id}/flag", {"reason": "unclear label"}, None, (401, 200, 404, 404, 404, 403, 403)),
    ("POST", "/api/v1/examples/{id}/explanations", {"explanations": {"example_explanation": "sarcasm"}}, None, (401, 200, 404, 404, 404, 403, 403)),
    ("GET", "/api/v1/validations", None, None, SIGNED_IN_200),
    ("POST", "/api/v1/validations", _verdict, _lease_to_caller, (401, 403, 201, 403, 201, 201, 201)),
    ("GET", "/api/v1/validations/next", {"task": "sentiment"}, None, (401, 403, 200, 403, 200, 200, 200)),
    ("GET", "/api/v1/models", None, None, ALL_200),
    # submitting needs the researcher role (the other task's owner has it) or owning the task;
    # an accepted archive is 202: a job unpacks it
    ("POST", "/api/v1/models", _archive, None, (401, 403, 403, 202, 202, 202, 202)),
    ("POST", "/api/v1/models/predictions", _predictions, None, (401, 403, 403, 201, 201, 201, 201)),
    # the dry runs answer whom a submission answers, and store nothing
    ("POST", "/api/v1/models/check", _archive, None, (401, 403, 403, 200, 200, 200, 200)),
    ("POST", "/api/v1/models/predictions/check", _predictions, None, (401, 403, 403, 200, 200, 200, 200)),
    # sentiment is not data-centric: every submitter gets wrong_submission (400), never a 5xx
    ("POST", "/api/v1/models/selections", {"task": "sentiment", "name": "matrix-selection", "uids": ["x"]}, None,
     (401, 403, 403, 400, 400, 400, 400)),
    ("POST", "/api/v1/models/selections/check", {"task": "sentiment", "uids": ["x"]}, None, (401, 403, 403, 400, 400, 400, 400)),
    # a metadata address is refused (400) to every submitter, before any request leaves the server
    ("POST", "/api/v1/models/endpoint", {"task": "sentiment", "name": "matrix-endpoint", "base_url": "http://169.254.169.254/v1",
                                         "model_name": "x"}, None, (401, 403, 403, 400, 400, 400, 400)),
    ("GET", "/api/v1/models/allowance", None, None, (401, 200, 200, 200, 200, 200, 200)),
    ("GET", "/api/v1/models/{id}", None, None, ALL_200),
    ("GET", "/api/v1/models/{id}", None, _unpublish_model, (404, 404, 404, 404, 404, 200, 200)),
    ("DELETE", "/api/v1/models/{id}", None, None, (401, 405, 405, 405, 405, 405, 405)),
    ("POST", "/api/v1/models/{id}/publish", {"published": False}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("POST", "/api/v1/models/{id}/anonymise", {"anonymous": True}, None, (401, 403, 403, 403, 403, 200, 200)),
    # the matrix's model is a directory: its owners learn it has no endpoint (404 to read, 400 to change)
    ("GET", "/api/v1/models/{id}/endpoint", None, None, (401, 403, 403, 403, 403, 404, 404)),
    ("PATCH", "/api/v1/models/{id}/endpoint", {"model_name": "x"}, None, (401, 403, 403, 403, 403, 400, 400)),
    # consents and the calls under a key are the submitter's (the owner submitted the matrix's directory model)
    ("GET", "/api/v1/models/{id}/consents", None, None, (401, 403, 403, 403, 403, 200, 200)),
    ("PUT", "/api/v1/models/{id}/consents", {"consents": ["loop"]}, None, (401, 403, 403, 403, 403, 400, 400)),
    ("GET", "/api/v1/models/{id}/calls", None, None, (401, 403, 403, 403, 403, 200, 200)),
    ("GET", "/api/v1/tasks/{task_code}/leaderboard", None, None, ALL_200),
    ("POST", "/api/v1/tasks/{task_code}/leaderboard", {}, None, ALL_405),
    ("GET", "/api/v1/tasks/{task_code}/arena", None, None, (404,) * 7),  # a classification task has no arena; public on open-ended tasks
    ("POST", "/api/v1/tasks/{task_code}/arena", {}, None, ALL_405),
    ("GET", "/api/v1/tasks/{task_code}/generative", None, None, ALL_200),
    ("GET", "/api/v1/datasets", None, None, ALL_200),
    ("POST", "/api/v1/datasets", {"name": "x"}, None, ALL_405),
    ("GET", "/api/v1/datasets/{id}", None, None, ALL_200),
    ("DELETE", "/api/v1/datasets/{id}", None, None, ALL_405),
    ("GET", "/api/v1/datasets/{id}/items", None, None, ALL_200),
    # the hidden set's file and Croissant description: everyone, without labels but for owners and admins
    ("GET", "/api/v1/datasets/{id}/download.jsonl", None, None, ALL_200),
    ("GET", "/api/v1/datasets/{id}/croissant.json", None, None, ALL_200),
    # the owner's console
    ("GET", "/api/v1/tasks/{task_code}/settings", None, None, OWNERS_ONLY_READ),
    ("PATCH", "/api/v1/tasks/{task_code}/settings", {"instructions": "Be kind.", "version": 1}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("GET", "/api/v1/tasks/{task_code}/roles", None, None, OWNERS_ONLY_READ),
    ("POST", "/api/v1/tasks/{task_code}/roles", {"user": "rita", "role": "validator"}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("DELETE", "/api/v1/tasks/{task_code}/roles", {"user": "rita", "role": "validator"}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("POST", "/api/v1/tasks/{task_code}/bans", {"user": "rita", "reason": "spam"}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("DELETE", "/api/v1/tasks/{task_code}/bans", {"user": "rita"}, None, (401, 403, 403, 403, 403, 200, 200)),
    ("POST", "/api/v1/tasks/{task_code}/uploads", _console_file, None, (401, 403, 403, 403, 403, 201, 201)),
    ("GET", "/api/v1/tasks/{task_code}/uploads/{upload_id}", None, None, OWNERS_ONLY_READ),
    ("POST", "/api/v1/tasks/{task_code}/uploads/{upload_id}/import", {"fields": {"prompt": "prompt"}, "uid": "uid"}, None,
     (401, 403, 403, 403, 403, 200, 200)),
    ("POST", "/api/v1/tasks/{task_code}/images", _image_file, None, (401, 403, 403, 403, 403, 400, 400)),
    ("GET", "/api/v1/tasks/{task_code}/images", None, None, OWNERS_ONLY_READ),
    ("POST", "/api/v1/tasks/{task_code}/audio", _audio_file, None, (401, 403, 403, 403, 403, 400, 400)),
    ("GET", "/api/v1/tasks/{task_code}/audio", None, None, OWNERS_ONLY_READ),
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/dashboard", None, None, OWNERS_ONLY_READ),
    # the validated unsafe rates are a text-to-image task's: sentiment's owners get 404, everyone else 403
    ("GET", "/api/v1/tasks/{task_code}/rounds/{round_number}/unsafe-rates", None, None, (401, 403, 403, 403, 403, 404, 404)),
    ("GET", "/api/v1/tasks/{task_code}/people", None, None, OWNERS_ONLY_READ),
]


def _user(username, *roles, **extra):
    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


@pytest.fixture(scope="module")
def _matrix_world(django_db_setup, django_db_blocker, tmp_path_factory, tiny_classifier_dir):
    """The people and the world of every row, built once per module (each row used to build its own:
    ~50 ms of set-up, 511 times) inside a transaction that is rolled back when the module's tests are
    done (pytest-django wraps each test in a savepoint inside it, so each row still starts from this
    state and leaves nothing behind). Under pytest-xdist a worker that runs a test of another module
    in between tears this down first (module scope) and builds it again for the next row.

    The same objects as the shared fixtures make (conftest.py, tests/api/conftest.py): the users of
    each role, the default tasks, sentiment's two scoring datasets, a tiny model in round 1's loop;
    and the world's example and console upload. Returns primary keys (each test loads fresh instances)
    and the media folder that holds the upload's file (each test gets a copy in its own MEDIA_ROOT)."""
    from tasks.data.seed import seed_default_tasks

    media = tmp_path_factory.mktemp("matrix-media")
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
    try:
        with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"], MEDIA_ROOT=media):
            annotator = _user("annie", "annotator")
            validator = _user("val", "validator")
            researcher = _user("rita", "researcher")
            tasks = {t.code: t for t in seed_default_tasks()}
            nli_owner = _user("nora", "annotator", "validator", "researcher")
            tasks["nli"].owners.add(nli_owner)
            owner = _user("olga", "annotator", "validator")
            for task in tasks.values():
                task.owners.add(owner)
            admin_user = User.objects.create_superuser(username="root", password="pw-root", email="root@example.org")
            task = tasks["sentiment"]
            round1 = task.rounds.get(number=1)
            datasets = {}
            for name, key, visibility, split in (("sent-r1-dev", "scoring", "public", "dev"), ("sent-r1-test", "hidden", "hidden", "test")):
                dataset = Dataset.objects.create(task=task, round=round1, name=name, access="scoring", split=split, label_visibility=visibility)
                DatasetItem.objects.bulk_create(
                    DatasetItem(dataset=dataset, uid=f"{name}-{i}", input={"text": f"{name} sentence {i}"}, target={"label": label},
                                metadata={"gold_votes": [label] * 5})
                    for i, label in enumerate(["positive", "negative", "neutral"])
                )
                datasets[key] = dataset.pk
            model = MLModel.objects.create(
                task=task, owner=owner, name="tiny-sentiment", kind=MLModel.Kind.HF_DIRECTORY, path=str(tiny_classifier_dir),
                status=MLModel.Status.EVALUATED, published=True,
            )
            round1.target_models.add(model)
            context = task.current_round().contexts.order_by("pk").first()
            example = Example.objects.create(
                round=context.round, context=context, author=annotator, model=model, input={"text": "Sure, wait an hour."},
                target={"label": "negative"}, model_output={"label": "positive", "probs": {}}, model_wrong=True,
            )
            upload = store_upload(
                task=task, acting_user=admin_user, target="contexts", options={"round": 1},
                file=SimpleUploadedFile("contexts.csv", b"uid,prompt\nconsole-0,The ferry left early.\n"),
            )
            people = dict(zip(ROLES, (None, annotator.pk, validator.pk, researcher.pk, nli_owner.pk, owner.pk, admin_user.pk)))
        yield {"people": people, "task": task.pk, "datasets": datasets, "model": model.pk, "context": context.pk, "example": example.pk,
               "upload_id": upload.pk, "media": media}
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


@pytest.fixture
def people(_matrix_world, db):
    users = User.objects.in_bulk([pk for pk in _matrix_world["people"].values() if pk])
    return {role: users.get(pk) for role, pk in _matrix_world["people"].items()}


@pytest.fixture
def world(_matrix_world, db, settings):
    """Round 1 of sentiment with a model in the loop, datasets, and a fooling example by the annotator
    (fresh instances of the module's objects; the console upload's file copied into this test's media)."""
    shutil.copytree(_matrix_world["media"], settings.MEDIA_ROOT, dirs_exist_ok=True)
    return {
        "task": Task.objects.get(pk=_matrix_world["task"]), "task_code": "sentiment", "round_number": 1,
        "datasets": {key: Dataset.objects.get(pk=pk) for key, pk in _matrix_world["datasets"].items()},
        "model": MLModel.objects.get(pk=_matrix_world["model"]), "context": Context.objects.select_related("round").get(pk=_matrix_world["context"]),
        "example": Example.objects.select_related("author").get(pk=_matrix_world["example"]), "upload_id": _matrix_world["upload_id"],
    }


def _url(path, world):
    ids = {"/api/v1/datasets/": world["datasets"]["hidden"].pk, "/api/v1/models/": world["model"].pk, "/api/v1/examples/": world["example"].pk}
    for prefix, pk in ids.items():
        if path.startswith(prefix):
            path = path.replace("{id}", str(pk))
    return path.format(task_code=world["task_code"], round_number=world["round_number"], upload_id=world["upload_id"],
                       round_id=world["context"].round_id, version="1.0.0")


CASES = [
    pytest.param(method, path, body, prepare, role, expected[i], id=f"{method} {path}{' after ' + prepare.__name__ if prepare else ''} as {role}")
    for method, path, body, prepare, expected in MATRIX
    for i, role in enumerate(ROLES)
]


@pytest.mark.parametrize("method, path, body, prepare, role, expected", CASES)
def test_permission_matrix(method, path, body, prepare, role, expected, people, world):
    if prepare:
        prepare(world, people[role]) if getattr(prepare, "per_user", False) else prepare(world)
    client = client_for(people[role]) if people[role] else APIClient()

    data = body(world) if callable(body) else body
    fmt = "multipart" if getattr(body, "multipart", False) else "json"
    response = getattr(client, method.lower())(_url(path, world), data, format=fmt)

    assert response.status_code == expected, response.content[:300]
    if expected >= 400:
        assert response.json()["detail"], "an error answer says what went wrong"


def test_the_matrix_covers_every_operation_of_the_schema(db):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}

    covered = {(method, path) for method, path, *_ in MATRIX}

    assert operations - covered == set()
