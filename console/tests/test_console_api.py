"""The console's API calls the same services as its pages: settings with a version check, a
two-step upload (file, then mapping) refused line by line, roles, the dashboard and people."""

import io

from tests.api.conftest import client_for


def _file(content: bytes, name="contexts.csv"):
    upload = io.BytesIO(content)
    upload.name = name
    return upload


def test_settings_change_with_the_version_read_and_a_stale_one_is_a_409(owner, sentiment_task):
    client = client_for(owner)
    read = client.get("/api/v1/tasks/sentiment/settings").json()

    changed = client.patch("/api/v1/tasks/sentiment/settings", {"labels": ["positive", "negative"], "version": read["version"]}, format="json")
    stale = client.patch("/api/v1/tasks/sentiment/settings", {"instructions": "Late.", "version": read["version"]}, format="json")
    missing = client.patch("/api/v1/tasks/sentiment/settings", {"instructions": "No version."}, format="json")
    bad = client.patch("/api/v1/tasks/sentiment/settings", {"validations_needed": 0, "version": read["version"] + 1}, format="json")

    assert changed.status_code == 200 and changed.json()["labels"] == ["positive", "negative"]
    assert stale.status_code == 409 and stale.json()["code"] == "stale_settings"
    assert missing.status_code == 400 and missing.json()["field"] == "version"
    assert bad.status_code == 400 and list(bad.json()["errors"]) == ["validations_needed"]


def test_an_upload_with_a_broken_line_is_refused_naming_it_and_a_good_one_imports(owner, sentiment_task):
    client = client_for(owner)
    created = client.post(
        "/api/v1/tasks/sentiment/uploads",
        {"file": _file(b"id,sentence\na1,First.\na2,Second,extra\na3,Third.\n"), "target": "contexts", "round": 1},
        format="multipart",
    )
    assert created.status_code == 201 and created.json()["columns"] == ["id", "sentence"] and created.json()["rows"] == 3
    upload = created.json()["id"]

    refused = client.post(f"/api/v1/tasks/sentiment/uploads/{upload}/import", {"fields": {"prompt": "sentence"}, "uid": "id"}, format="json")

    body = refused.json()
    assert refused.status_code == 400 and body["status"] == "failed" and body["error_count"] == 1
    assert body["errors"] == [{"line": 3, "message": "expected 2 fields as in the header, found 3"}]
    assert not sentiment_task.current_round().contexts.filter(uid="a1").exists()

    good = client.post(
        "/api/v1/tasks/sentiment/uploads", {"file": _file(b"id,sentence\na1,First.\na3,Third.\n"), "target": "contexts", "round": 1},
        format="multipart",
    ).json()["id"]
    done = client.post(f"/api/v1/tasks/sentiment/uploads/{good}/import", {"fields": {"prompt": "sentence"}, "uid": "id"}, format="json")
    assert done.json()["status"] == "done" and done.json()["result"]["added"] == 2
    assert client.get(f"/api/v1/tasks/sentiment/uploads/{good}").json()["progress"] == 1.0


def test_a_mapping_naming_a_missing_column_is_a_400_naming_the_field(owner, sentiment_task):
    client = client_for(owner)
    upload = client.post(
        "/api/v1/tasks/sentiment/uploads", {"file": _file(b"id,sentence\na1,First.\n"), "target": "contexts", "round": 1}, format="multipart"
    ).json()["id"]
    response = client.post(f"/api/v1/tasks/sentiment/uploads/{upload}/import", {"fields": {"prompt": "text"}}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "prompt" and "no column 'text'" in response.json()["detail"]


def test_roles_dashboard_and_people(owner, researcher, sentiment_task):
    client = client_for(owner)
    granted = client.post("/api/v1/tasks/sentiment/roles", {"user": "rita", "role": "annotator"}, format="json")
    assert granted.status_code == 200 and granted.json() == {"user": "rita", "roles": ["annotator"], "banned": False}
    unknown = client.post("/api/v1/tasks/sentiment/roles", {"user": "nobody", "role": "annotator"}, format="json")
    assert unknown.status_code == 404

    board = client.get("/api/v1/tasks/sentiment/rounds/1/dashboard").json()
    assert board["round"] == 1 and board["collected"] == 0 and board["unused_contexts"] == board["contexts"] > 0
    people = client.get("/api/v1/tasks/sentiment/people", {"search": "rit"}).json()
    assert [p["user"] for p in people] == ["rita"] and people[0]["roles"] == ["annotator"]
