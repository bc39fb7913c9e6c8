"""Every page a text-to-image task reaches renders for the person who uses it (no error from a kind
without labels, scores or uploads), its one-shot paths (the create API, the sandbox) say to use the
text-to-image page, and the export's images need the task's owner."""

import pytest

from annotation.sandbox import try_model
from annotation.services import create_example
from dynabench.errors import RuleError
from tests.t2i_support import add_context, nibbler_task


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def test_pages_render_and_one_shot_paths_point_to_the_text_to_image_page(client, owner, annotator, validator):
    task = nibbler_task(owner)
    context = add_context(task)
    pages = [
        (annotator, f"/tasks/{task.code}/"), (annotator, f"/tasks/{task.code}/leaderboard/"), (annotator, "/my/examples/"),
        (validator, f"/tasks/{task.code}/validate/"), (owner, f"/tasks/{task.code}/rounds/1/"),
        (owner, f"/tasks/{task.code}/console/"), (owner, f"/tasks/{task.code}/console/rounds/"),
        (owner, f"/tasks/{task.code}/console/rounds/1/dashboard"), (owner, f"/tasks/{task.code}/console/images/"),
        (owner, f"/tasks/{task.code}/rounds/1/owner/"), (owner, f"/tasks/{task.code}/rounds/1/export-with-images.zip"),
    ]
    for user, path in pages:
        client.force_login(user)
        assert client.get(path).status_code == 200, path
    client.force_login(annotator)
    assert client.get(f"/tasks/{task.code}/write/").url == f"/tasks/{task.code}/imagine/"
    assert client.get(f"/tasks/{task.code}/rounds/1/export-with-images.zip").status_code in (302, 403, 404)
    with pytest.raises(RuleError, match="text-to-image page") as refused:
        create_example(user=annotator, context=context, input={"text": "a prompt"}, target={})
    assert refused.value.code == "wrong_flow"
    with pytest.raises(RuleError, match="text-to-image page"):
        try_model(task=task, input={"text": "a prompt"}, visitor=f"user:{annotator.pk}")
