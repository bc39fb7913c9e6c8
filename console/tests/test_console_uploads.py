"""Contexts and datasets uploaded through the console: a column mapping, all-or-nothing with
line-numbered errors (the first 20 shown and a count of the rest), an RQ job with a progress
bar above a few thousand rows, a size limit from settings, and DynaSent round 2 end to end."""

import json

import django_rq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.models import Context, Dataset, MLModel, Upload
from tests.shared_data import shared_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


def _upload(client, filename, content: bytes, **fields):
    data = {"target": "contexts", "round": 1, **fields, "file": SimpleUploadedFile(filename, content)}
    return client.post("/tasks/sentiment/console/uploads/", data)


def _csv(rows: int, bad: dict | None = None) -> bytes:
    lines = ["id,sentence,topic"]
    for i in range(1, rows + 1):
        lines.append((bad or {}).get(i + 1, f"ctx-{i},Sentence number {i} about the service.,food"))
    return ("\n".join(lines) + "\n").encode()


def _mapping(**changes):
    return {"field_prompt": "sentence", "uid": "id", "tag": "topic", **changes}


def test_a_csv_with_a_column_mapping_adds_every_context(logged_in, sentiment_task):
    response = _upload(logged_in, "contexts.csv", _csv(1000))
    assert response.status_code == 302
    upload = Upload.objects.get()
    assert (upload.rows, upload.columns, upload.status) == (1000, ["id", "sentence", "topic"], "mapping")
    page = logged_in.get(response["Location"]).content.decode()
    assert "Sentence number 1 about the service." not in page and "no column chosen" in page  # no column is named 'prompt'
    preview = logged_in.get(f"/tasks/sentiment/console/uploads/{upload.pk}/preview", {"field_prompt": "sentence", "uid": "id"})
    assert "Sentence number 1 about the service." in preview.content.decode()

    response = logged_in.post(response["Location"], _mapping())

    assert response.status_code == 302
    upload.refresh_from_db()
    assert upload.status == "done" and upload.result["added"] == 1000
    round1 = sentiment_task.rounds.get(number=1)
    assert round1.contexts.filter(uid="ctx-7", data={"prompt": "Sentence number 7 about the service."}, tag="food").exists()
    assert "1000 added" in logged_in.get(response["Location"]).content.decode()


def test_one_broken_line_writes_nothing_and_names_the_line(logged_in, sentiment_task):
    before = Context.objects.count()
    _upload(logged_in, "contexts.csv", _csv(50, bad={31: "ctx-30,unterminated, extra,field"}))
    upload = Upload.objects.get()

    response = logged_in.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", _mapping())

    upload.refresh_from_db()
    assert upload.status == "failed" and upload.error_count == 1
    assert upload.errors == [{"line": 31, "message": "expected 3 fields as in the header, found 4"}]
    assert response.status_code == 400
    page = response.content.decode()
    assert "line 31: expected 3 fields" in page and "nothing was imported" in page
    assert Context.objects.count() == before


def test_a_wrong_column_is_refused_line_by_line_with_the_first_20_shown(logged_in):
    jsonl = "".join(json.dumps({"id": f"r{i}", "text": f"Sentence {i}."}) + "\n" for i in range(45)).encode()
    _upload(logged_in, "contexts.jsonl", jsonl)
    upload = Upload.objects.get()
    upload.columns = [*upload.columns, "sentence"]  # as if the header had promised a column the rows lack
    upload.save()

    response = logged_in.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", {"field_prompt": "sentence", "uid": "id"})

    upload.refresh_from_db()
    assert upload.status == "failed" and upload.error_count == 45 and len(upload.errors) == 20
    assert upload.errors[0] == {"line": 1, "message": "missing field 'sentence' (for prompt)"}
    assert response.status_code == 400
    page = response.content.decode()
    assert "line 20: missing field" in page and "line 21:" not in page and "and 25 more" in page


def test_the_mapping_step_refuses_a_missing_required_field_and_keeps_the_choice(logged_in):
    _upload(logged_in, "contexts.csv", _csv(3))
    upload = Upload.objects.get()
    response = logged_in.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", {"field_prompt": "", "uid": "id", "tag": "topic"})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'data-error-for="field_prompt"' in page and "Choose the column that holds prompt" in page
    assert '<option value="topic" selected>' in page


def test_a_file_over_the_size_limit_or_of_another_kind_is_refused(logged_in, settings):
    settings.CONSOLE_UPLOAD_MAX_BYTES = 100
    response = _upload(logged_in, "contexts.csv", _csv(20))
    assert response.status_code == 413 and "the limit is 100 bytes" in response.content.decode()
    response = _upload(logged_in, "contexts.xlsx", b"PK..")
    assert response.status_code == 400 and "is not a .csv or .jsonl file" in response.content.decode()
    assert not Upload.objects.exists()


def test_a_large_file_is_imported_by_an_rq_job_with_progress(logged_in, settings, sentiment_task, monkeypatch, django_capture_on_commit_callbacks):
    settings.CONSOLE_UPLOAD_JOB_ROWS = 100
    settings.RQ_QUEUES = {**settings.RQ_QUEUES, "default": {**settings.RQ_QUEUES["default"], "ASYNC": False}}
    _upload(logged_in, "contexts.csv", _csv(2500))
    upload = Upload.objects.get()
    queued = []
    original = django_rq.get_queue

    def spy(name):
        queue = original(name)
        queued.append(name)
        return queue

    monkeypatch.setattr(django_rq, "get_queue", spy)
    with django_capture_on_commit_callbacks(execute=True):
        logged_in.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", _mapping())

    upload.refresh_from_db()
    assert queued == ["default"] and upload.job_id.startswith(f"upload-{upload.pk}-")
    assert upload.status == "done" and upload.result["added"] == 2500
    status = logged_in.get(f"/tasks/sentiment/console/uploads/{upload.pk}/status").content.decode()
    assert 'data-status="done"' in status and "2500 added" in status


def test_a_queued_upload_shows_a_progress_bar_that_polls(logged_in, sentiment_task):
    _upload(logged_in, "contexts.csv", _csv(3))
    upload = Upload.objects.get()
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.RUNNING)
    from django.core.cache import cache

    cache.set(f"console:upload:{upload.pk}:progress", 0.42)
    status = logged_in.get(f"/tasks/sentiment/console/uploads/{upload.pk}/status").content.decode()
    assert '<progress max="100" value="42"' in status and 'hx-trigger="every 1s"' in status


def test_the_dynasent_round_2_contexts_upload_through_the_page(logged_in, sentiment_task, owner):
    from tasks.services import open_round, set_round_status

    path = shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl")
    # Round 1 has no validated examples, so it is closed without building datasets.
    set_round_status(round=sentiment_task.current_round(), status="closed", acting_user=owner)
    model = MLModel.objects.create(task=sentiment_task, name="in-loop", path="/models/in-loop")
    open_round(task=sentiment_task, acting_user=owner, target_model_ids=[model.pk])

    response = _upload(logged_in, path.name, path.read_bytes(), round=2)
    upload = Upload.objects.get()
    assert response.status_code == 302 and "prompt_data.prompt_sentence" in upload.columns
    logged_in.post(response["Location"], {"field_prompt": "prompt_data.prompt_sentence", "uid": "__content__", "tag": ""})

    upload.refresh_from_db()
    round2 = sentiment_task.rounds.get(number=2)
    prompts = {json.loads(line)["prompt_data"]["prompt_sentence"] for line in path.read_text().splitlines() if line.strip()}
    assert upload.status == "done", upload.errors
    assert upload.result["added"] == len(prompts) == round2.contexts.count()
    assert upload.result["added"] + upload.result["repeated"] == 720


def test_a_dataset_upload_maps_the_input_and_the_label(logged_in, sentiment_task):
    content = b"sentence,gold\nGreat food.,positive\nCold soup.,negative\n"
    response = _upload(logged_in, "extra.csv", content, target="dataset", name="sentiment-extra", split="dev", access="standard", label_visibility="hidden", round="")
    upload = Upload.objects.get()
    logged_in.post(response["Location"], {"field_text": "sentence", "field_label": "gold", "uid": "__line__"})

    upload.refresh_from_db()
    dataset = Dataset.objects.get(name="sentiment-extra")
    assert upload.status == "done" and (dataset.split, dataset.access, dataset.label_visibility) == ("dev", "standard", "hidden")
    assert sorted(dataset.items.values_list("target__label", flat=True)) == ["negative", "positive"]
