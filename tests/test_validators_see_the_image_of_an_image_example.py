"""A validator reviewing an example of an image task sees its image (served by hash), not the hash
as text; with a content warning it is blurred behind its "Show image" button."""

import pytest

from annotation.services import create_example
from leaderboard.services import register_model_directory
from tasks.data.images import ingest_images
from tasks.models import Context
from tests.image_support import SHAPES, image_file, shapes_task
from tests.tiny_models import build_tiny_image_classifier


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def test_validators_see_the_image_of_an_image_example(client, owner, annotator, validator, tmp_path):
    task = shapes_task(owner)
    task.config = {**task.config, "validate_non_fooling": True}
    task.content_warning = "May show violence."
    task.save()
    ingest_images(task=task, acting_user=owner, round_number=1, files=[image_file("a.png")])
    model = register_model_directory(actor=owner, task=task, path=build_tiny_image_classifier(tmp_path / "vit", list(SHAPES)), name="vit")
    task.rounds.get().target_models.add(model)
    context = Context.objects.get(round__task=task)
    create_example(user=annotator, context=context, input={"note": ""}, target={"label": "triangle"})
    client.force_login(validator)
    client.post(f"/tasks/{task.code}/write/warning")  # the task's content warning, read first
    body = client.get(f"/tasks/{task.code}/validate/").content.decode()
    assert f'data-context-image="{context.uid}"' in body
    assert f'src="/tasks/{task.code}/images/{context.uid}"' in body
    assert "data-blurred" in body and "data-reveal" in body
    assert f'<blockquote class="context-text">{context.uid}' not in body
