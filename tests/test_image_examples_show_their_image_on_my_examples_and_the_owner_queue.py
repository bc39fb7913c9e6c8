"""An example written on an image shows that image (a thumbnail linking to it), not its hash, on the
author's "My examples" page and in the owner's queue, with the written answer of a visual question;
under a content warning the thumbnail is blurred behind its own "Show image" button."""

import pytest
from django.test import Client

from annotation.services import create_example
from tasks.data.images import ingest_images
from tasks.models import Context
from tasks.loop.registry import clear_cache
from tests.image_support import image_file
from tests.vqa_support import build_tiny_vilt, vqa_task


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    clear_cache()
    yield
    clear_cache()
    cache.clear()


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("warning", ["", "Some images may be disturbing."])
def test_image_examples_show_their_image(owner, annotator, tmp_path, warning):
    from leaderboard.services import register_model_directory

    task = vqa_task(owner)
    task.content_warning = warning
    task.save(update_fields=["content_warning"])
    ingest_images(task=task, acting_user=owner, files=[image_file("c.png")], round_number=1)
    model = register_model_directory(actor=owner, task=task, name="vilt", path=build_tiny_vilt(tmp_path / "vilt"))
    round1 = task.rounds.get(number=1)
    round1.target_models.add(model)
    context = Context.objects.get(round=round1)
    create_example(user=annotator, context=context, input={"question": "what colour is the shape"}, target={"answers": ["Yellow"]})
    thumb = f'data-image-thumb="{context.uid}"'
    for user, url in ((annotator, "/my/examples/"), (owner, f"/tasks/{task.code}/rounds/1/owner/")):
        page = _client(user).get(url)
        html = page.content.decode()
        assert page.status_code == 200
        assert thumb in html and f"/tasks/{task.code}/images/{context.uid}/thumb" in html
        assert "Yellow" in html and "what colour is the shape" in html
        figure = html[html.index(thumb) - 80: html.index(thumb) + 600]
        assert ("blurred" in figure and "data-reveal" in figure) == bool(warning)
    assert 'name="corrected_answer"' not in _client(owner).get(f"/tasks/{task.code}/rounds/1/owner/").content.decode()
