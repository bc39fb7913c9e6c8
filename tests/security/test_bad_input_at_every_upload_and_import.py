"""Issue 28 (inputs): JSON nested 100,000 deep or an integer of 5,000 digits in an upload or an import
answered 500 (``RecursionError``, Python's int-string limit), and NUL in an imported text failed on
PostgreSQL only. Every upload and import surface now reads through the one bounded reader
(``dynabench.jsonbounds``) and answers each of these inputs with a clear, line-numbered refusal,
storing nothing. Run with ``DATABASE_URL=postgres://...`` to check the NUL cases on PostgreSQL.

One table: every bad line x every surface. The console's upload import keeps its protocol (the import
call answers with the upload ``failed`` and its line-numbered problems); every other surface answers 4xx.
"""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Example
from tasks.models import Context, DatasetItem, MLModel
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (two scoring datasets of sentiment)

DEEP = "[" * 100_000 + "]" * 100_000
BAD_LINES = {
    "nested 100,000 deep": ('{"uid": "bad", "text": "t", "label": "positive", "extra": ' + DEEP + "}", "levels deep"),
    "5,000-digit integer": ('{"uid": ' + "7" * 5000 + ', "text": "t", "label": "positive"}', "more than 19 digits"),
    "integer past 64 bits": ('{"uid": 9223372036854775808, "text": "t", "label": "positive"}', "outside a signed 64-bit integer"),
    "NUL in a text": ('{"uid": "nul", "text": "a\\u0000b", "label": "positive"}', "NUL character"),
    "lone surrogate": ('{"uid": "sur", "text": "a\\ud800b", "label": "positive"}', "lone surrogate"),
    "NaN": ('{"uid": "nan", "text": "t", "label": "positive", "score": NaN}', "not a finite number"),
}
GOOD_LINE = '{"uid": "good", "text": "A fine sentence.", "label": "positive"}'


def _stored():
    return Context.objects.count(), DatasetItem.objects.count(), MLModel.objects.count(), Example.objects.count()


def _file(name: str, text: str):
    upload = io.BytesIO(text.encode("utf-8"))
    upload.name = name
    return upload


def import_dataset_command(owner, line):
    path = owner._tmp / "rows.jsonl"
    path.write_text(GOOD_LINE + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_dataset", "sentiment", "broken", str(path))
    return str(refused.value)


def import_contexts_command(owner, line):
    path = owner._tmp / "contexts.jsonl"
    path.write_text('{"uid": "c1", "prompt": "Fine."}\n' + line.replace('"text"', '"prompt"') + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_contexts", "sentiment", "1", str(path))
    return str(refused.value)


def contexts_api(owner, line):
    text = '{"uid": "c1", "prompt": "Fine."}\n' + line.replace('"text"', '"prompt"') + "\n"
    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/contexts", {"file": _file("c.jsonl", text)}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    return response.json()["detail"]


def console_upload_api(owner, line):
    client = client_for(owner)
    created = client.post(
        "/api/v1/tasks/sentiment/uploads",
        {"file": _file("d.jsonl", GOOD_LINE + "\n" + line + "\n"), "target": "dataset", "name": "broken", "split": "dev"},
        format="multipart",
    )
    assert created.status_code == 201, created.content[:300]
    answer = client.post(f"/api/v1/tasks/sentiment/uploads/{created.json()['id']}/import",
                         {"fields": {"text": "text", "label": "label"}, "uid": "uid"}, format="json")
    body = answer.json()
    assert body["status"] == "failed", body
    return f"line {body['errors'][0]['line']}: {body['errors'][0]['message']}"


def predictions_api(owner, line):
    text = '{"uid": "sent-r1-dev-0", "label": "positive"}\n' + line + "\n"
    response = client_for(owner).post(
        "/api/v1/models/predictions", {"task": "sentiment", "name": "bad", "predictions": _file("p.jsonl", text)}, format="multipart",
    )
    assert response.status_code == 400, response.content[:300]
    return response.json()["detail"]


def predictions_page(owner, line):
    from django.test import Client

    client = Client()
    client.force_login(owner)
    text = '{"uid": "sent-r1-dev-0", "label": "positive"}\n' + line + "\n"
    response = client.post("/tasks/sentiment/submit/", {
        "kind": "predictions", "name": "bad", "upload": SimpleUploadedFile("p.jsonl", text.encode()),
    })
    assert response.status_code == 400
    return response.content.decode()


SURFACES = {
    "import_dataset command": import_dataset_command,
    "import_contexts command": import_contexts_command,
    "contexts API": contexts_api,
    "console upload API": console_upload_api,
    "predictions API": predictions_api,
    "predictions page": predictions_page,
}


@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.parametrize("bad", list(BAD_LINES))
def test_every_upload_and_import_surface_refuses_the_bad_line_naming_it_and_stores_nothing(
    surface, bad, owner, sentiment_datasets, tmp_path,
):
    line, phrase = BAD_LINES[bad]
    owner._tmp = tmp_path
    before = _stored()

    message = SURFACES[surface](owner, line)

    assert "line 2" in message, message[:300]
    assert phrase in message, message[:300]
    assert _stored() == before


BAD_BODIES = {
    "nested 100,000 deep": ('{"task": "sentiment", "name": "x", "uids": ' + DEEP + "}", "parse_error", "levels deep"),
    "5,000-digit integer": ('{"task": "sentiment", "name": "x", "uids": [' + "9" * 5000 + "]}", "parse_error", "more than 19 digits"),
    "NUL in a string": ('{"task": "sentiment", "name": "x\\u0000", "uids": ["a"]}', "null_character", "NUL character"),
    "lone surrogate": ('{"task": "sentiment", "name": "\\udc00", "uids": ["a"]}', "null_character", "lone surrogate"),
    "Infinity": ('{"task": "sentiment", "name": "x", "uids": [Infinity]}', "parse_error", "Infinity"),
}


@pytest.mark.parametrize("bad", list(BAD_BODIES))
@pytest.mark.parametrize("path", ["/api/v1/models/selections", "/api/v1/examples", "/api/v1/validations"])
def test_an_api_json_body_out_of_bounds_is_a_400_naming_the_problem(bad, path, owner, sentiment_task):
    body, code, phrase = BAD_BODIES[bad]
    before = _stored()

    response = client_for(owner).generic("POST", path, body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert response.json()["code"] == code and phrase in response.json()["detail"]
    assert _stored() == before


def test_a_csv_cell_with_a_nul_is_refused_naming_its_line_and_column(owner, sentiment_task):
    text = "uid,prompt\nc1,Fine.\nc2,bad\x00cell\n"
    before = _stored()

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/contexts", {"file": _file("c.csv", text)}, format="multipart")

    assert response.status_code == 400
    assert response.json()["detail"] == "line 3: column 'prompt' holds a NUL character (\\u0000) at column 4; remove it"
    assert _stored() == before
