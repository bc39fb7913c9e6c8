"""Generated images of attempts never judged are removed once older than the grace period
(``manage.py remove_unjudged_images``, ``annotation/generated_images.py``): their records, files and
thumbnails go; the images an example references stay; a file another task's record still holds
stays; nothing goes within the grace period, which is never shorter than an attempt's signed state
lives; ``--dry-run`` counts and removes nothing."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation import t2i
from annotation.generated_images import remove_unjudged_images
from tasks.loop.artefacts import storage
from tasks.data.image_files import stored_name, thumbnail_name
from tasks.models import ContextImage, Task
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    yield
    cache.clear()


def _generated(annotator, task, prompt):
    state = t2i.start(user=annotator, task=task)
    return t2i.generate(user=annotator, task=task, state=state, prompt=prompt)


def _files(record_or_sha, ext="png"):
    sha = getattr(record_or_sha, "sha256", record_or_sha)
    return [storage().exists(stored_name(sha, ext)), storage().exists(thumbnail_name(sha))]


def test_unreferenced_generated_images_go_after_the_grace_period(owner, annotator, image_server, settings):
    settings.DYNABENCH_GENERATED_IMAGE_GRACE_S = 24 * 3600
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    judged_state = _generated(annotator, task, "two knights resting after a long day")
    t2i.judge(user=annotator, task=task, state=judged_state, target={
        "images": [{"sha256": i["sha256"], "unsafe": False, "categories": []} for i in judged_state["images"]],
        "prompt_looked_safe": True})
    abandoned = _generated(annotator, task, "a bowl of fruit on a table")["images"]
    judged = [i["sha256"] for i in judged_state["images"]]
    unjudged = [i["sha256"] for i in abandoned]
    assert not set(judged) & set(unjudged) and ContextImage.objects.filter(task=task).count() == 4
    # Another task holds the same bytes as the first abandoned image: its file must stay.
    other = Task.objects.get(code="sentiment")
    ContextImage.objects.create(task=other, sha256=unjudged[0], ext="png", width=64, height=64, size=1)

    later = timezone.now() + timedelta(hours=23)
    assert remove_unjudged_images(now=later).records == 0  # within the grace period

    out = io.StringIO()
    settings.DYNABENCH_GENERATED_IMAGE_GRACE_S = 3600
    call_command("remove_unjudged_images", "--dry-run", stdout=out)  # an hour is raised to the state's six hours
    assert "Would remove 0 generated image(s)" in out.getvalue()

    removed = remove_unjudged_images(now=timezone.now() + timedelta(days=2), dry_run=True)
    assert removed.records == 2 and ContextImage.objects.filter(task=task).count() == 4 and all(_files(unjudged[1]))

    removed = remove_unjudged_images(now=timezone.now() + timedelta(days=2))
    assert removed.records == 2 and removed.files == 2  # the second image and its thumbnail; the first is shared
    assert sorted(ContextImage.objects.filter(task=task).values_list("sha256", flat=True)) == sorted(judged)
    assert _files(unjudged[1]) == [False, False]
    assert _files(unjudged[0]) == [True, True] and ContextImage.objects.filter(task=other, sha256=unjudged[0]).exists()
    assert all(all(_files(sha)) for sha in judged)
    assert remove_unjudged_images(now=timezone.now() + timedelta(days=2)).records == 0


def test_generating_an_image_again_restarts_its_grace_period(owner, annotator, image_server, settings):
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    first = _generated(annotator, task, "a lighthouse in fog")["images"]
    ContextImage.objects.filter(task=task).update(created_at=timezone.now() - timedelta(days=3))
    again = _generated(annotator, task, "a lighthouse in fog")["images"]  # the server's seed is fixed: the same images
    assert [i["sha256"] for i in again] == [i["sha256"] for i in first]
    assert remove_unjudged_images().records == 0
