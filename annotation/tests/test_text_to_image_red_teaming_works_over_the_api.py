"""Text-to-image red-teaming over the REST API, against the real local images server: an annotator
posts a prompt and gets the stored images (hashes, URLs of the image endpoints, the content warning)
with a signed state, posts the per-image judgment with it (a repeat returns the same example), a
validator posts per-image verdicts with corrected harm categories through ``/api/v1/validations``,
and the owner reads the validated unsafe rates. The same rules as the page: a forged state, a
judgment that leaves an image out, and a task that generates no images are refused."""

import pytest

from annotation.models import Example
from tasks.models import ContextImage
from tests.api.conftest import client_for
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def test_prompt_judge_validate_and_read_rates_over_the_api(owner, annotator, validator, image_server):
    task = nibbler_task(owner, validations_needed=1)
    add_context(task)
    generator = endpoint_generator(task, image_server.url)
    writer = client_for(annotator)

    answer = writer.post(f"/api/v1/tasks/{task.code}/imagine", {"prompt": "two knights resting after a long day"}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["generator"] == "tiny-sd" and body["content_warning"] and body["prompt"] == "two knights resting after a long day"
    assert len(body["images"]) == 2 and len(image_server.requests) == 1
    first, second = body["images"]
    assert ContextImage.objects.filter(task=task, sha256=first["sha256"]).exists()
    assert first["url"].endswith(f"/tasks/{task.code}/images/{first['sha256']}") and first["thumbnail_url"].endswith("/thumb")
    served = writer.get(first["url"])
    assert served.status_code == 200 and served["Content-Type"].startswith("image/")

    forged = writer.post(f"/api/v1/tasks/{task.code}/imagine/judgments",
                         {"state": body["state"] + "x", "images": [], "prompt_looked_safe": True}, format="json")
    assert forged.status_code == 400 and forged.json()["code"] == "chat_expired"
    missing = writer.post(f"/api/v1/tasks/{task.code}/imagine/judgments",
                          {"state": body["state"], "images": [{"sha256": first["sha256"], "unsafe": True, "categories": ["violent"]}],
                           "prompt_looked_safe": True}, format="json")
    assert missing.status_code == 400 and "Mark every one of the 2 images" in missing.json()["detail"]

    judgment = {"state": body["state"], "prompt_looked_safe": True,
                "images": [{"sha256": second["sha256"], "unsafe": False}, {"sha256": first["sha256"], "unsafe": True, "categories": ["violent"]}]}
    saved = writer.post(f"/api/v1/tasks/{task.code}/imagine/judgments", judgment, format="json")
    assert saved.status_code == 201, saved.content
    example = Example.objects.get(pk=saved.json()["id"])
    assert example.model_wrong and example.model_id == generator.pk
    assert [m["unsafe"] for m in example.target["images"]] == [True, False]
    again = writer.post(f"/api/v1/tasks/{task.code}/imagine/judgments", judgment, format="json")
    assert again.json()["id"] == example.pk and Example.objects.filter(round__task=task).count() == 1

    checker = client_for(validator)
    leased = checker.get("/api/v1/validations/next", {"task": task.code})
    assert leased.status_code == 200 and leased.json()["id"] == example.pk
    verdict = checker.post("/api/v1/validations", {"example": example.pk, "label": "correct", "metadata": {
        "image_verdicts": {first["sha256"]: "unsafe", second["sha256"]: "safe"},
        "image_categories": {first["sha256"]: ["violent", "hate"]}}}, format="json")
    assert verdict.status_code == 201, verdict.content
    assert verdict.json()["label"] == "correct"

    rates = client_for(owner).get(f"/api/v1/tasks/{task.code}/rounds/1/unsafe-rates").json()
    assert rates["total"] == {"key": "all", "name": "all generators", "images": 2, "unsafe": 1, "rate": 0.5}
    by_category = {row["key"]: row["unsafe"] for row in rates["per_category"]}
    assert by_category["violent"] == 1 and by_category["hate"] == 1  # the validator's categories


def test_a_task_without_images_refuses_the_imagine_calls(owner, annotator):
    writer = client_for(annotator)
    answer = writer.post("/api/v1/tasks/sentiment/imagine", {"prompt": "a cat"}, format="json")
    assert answer.status_code == 400 and answer.json()["code"] == "not_text_to_image"
    assert client_for(None).post("/api/v1/tasks/sentiment/imagine", {"prompt": "a cat"}, format="json").status_code in (401, 403)
