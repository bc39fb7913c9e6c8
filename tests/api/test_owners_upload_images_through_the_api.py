"""Owners upload images through ``POST /api/v1/tasks/{code}/images`` with the console page's checks
(``tasks.data.images.ingest_images``): a zip of images and single files become contexts of the round and
are listed; a text file renamed .png, a 20,000 x 20,000 image, a truncated JPEG and a zip with a path
outside its folder are each refused with a 400 naming the file and the reason, and nothing is
stored; people who are not owners get a 403 and store nothing either."""

import io

import pytest

from tasks.models import Context, ContextImage
from tasks.tests.images.test_it_refuses_bad_images_and_stores_nothing import huge_png, truncated_jpeg
from tests.api.conftest import client_for
from tests.image_support import SHAPES, draw, encode, shapes_task, zip_file


def _file(data: bytes, name: str):
    upload = io.BytesIO(data)
    upload.name = name
    return upload


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _stored(media):
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_an_owner_uploads_a_zip_and_files_and_lists_them(owner, annotator, media):
    task = shapes_task(owner)
    members = {f"pics/{s}{n}.png": encode(draw(s, seed=n)) for s in SHAPES for n in range(3)}
    client = client_for(owner)
    answer = client.post(f"/api/v1/tasks/{task.code}/images", {
        "files": [zip_file(members, "pics.zip"), _file(encode(draw("circle", seed=9), "JPEG"), "extra.jpg")], "round": 1,
    }, format="multipart")
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["added"] == 10 and body["unchanged"] == 0 and len(body["images"]) == 10
    assert Context.objects.filter(round__task=task).count() == 10
    image = body["images"][0]
    assert image["url"] == f"/tasks/{task.code}/images/{image['sha256']}"
    assert client.get(image["thumbnail_url"]).status_code == 200
    listed = client.get(f"/api/v1/tasks/{task.code}/images").json()
    assert {i["sha256"] for i in listed} == {i["sha256"] for i in body["images"]}
    again = client.post(f"/api/v1/tasks/{task.code}/images", {"files": [zip_file(members, "pics.zip")], "round": 1}, format="multipart")
    assert again.status_code == 201 and again.json()["added"] == 0 and again.json()["unchanged"] == 9
    refused = client_for(annotator).post(f"/api/v1/tasks/{task.code}/images", {
        "files": [_file(encode(draw("square", seed=20)), "mine.png")], "round": 1}, format="multipart")
    assert refused.status_code == 403
    assert ContextImage.objects.count() == 10


BAD = [
    ("text renamed .png", lambda: _file(b"only text, not an image\n" * 20, "cat.png"), "'cat.png' is not an image Pillow can read"),
    ("20,000 x 20,000 image", lambda: _file(huge_png(), "big.png"), "'big.png' has more pixels than the limit"),
    ("truncated JPEG", lambda: _file(truncated_jpeg(), "cut.jpg"), "'cut.jpg' is damaged or truncated"),
    ("zip with a path outside its folder", lambda: zip_file({"ok.png": encode(draw()), "../evil.png": encode(draw(seed=2))}, "up.zip"),
     "'up.zip' has the member '../evil.png', whose path leads outside the zip's folder; nothing was stored."),
]


@pytest.mark.parametrize("what,make,message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_refused_with_its_reason_and_nothing_is_stored(owner, media, what, make, message):
    task = shapes_task(owner)
    answer = client_for(owner).post(f"/api/v1/tasks/{task.code}/images", {
        "files": [_file(encode(draw("circle")), "good.png"), make()], "round": 1}, format="multipart")
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_upload" and body["field"] == "files"
    assert message in body["errors"]["files"][0]
    assert ContextImage.objects.count() == 0 and Context.objects.filter(round__task=task).count() == 0
    assert _stored(media) == []


def test_a_missing_round_or_no_file_is_a_400(owner, media):
    task = shapes_task(owner)
    client = client_for(owner)
    no_round = client.post(f"/api/v1/tasks/{task.code}/images", {"files": [_file(encode(draw()), "a.png")], "round": 7}, format="multipart")
    assert no_round.status_code == 400 and no_round.json()["field"] == "round" and "no round 7" in no_round.json()["detail"]
    no_file = client.post(f"/api/v1/tasks/{task.code}/images", {"round": 1}, format="multipart")
    assert no_file.status_code == 400 and no_file.json()["field"] == "files"
    assert _stored(media) == []
