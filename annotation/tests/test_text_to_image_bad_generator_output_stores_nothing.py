"""A generator that answers with something other than acceptable images (bytes that are no image, an
image over the pixel limit, an answer that is not the images API) or does not answer at all (its
server down) is refused with a message saying why, and nothing is stored: no image file, no image
record, no example. The same server answering properly gives stored images."""

import pytest

from annotation import t2i
from annotation.models import Example
from dynabench.errors import RuleError
from tasks.loop.artefacts import storage
from tasks.models import ContextImage
from tests.endpoint_fixtures import allow_local_server
from tests.image_generation_server import start_image_server
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def _nothing_stored(task):
    assert ContextImage.objects.filter(task=task).count() == 0
    assert Example.objects.filter(round__task=task).count() == 0
    assert not storage().exists("images") or storage().listdir("images") == ([], [])


@pytest.mark.parametrize("mode, says", [
    ("garbage", "is not an image Pillow can read"),
    ("huge", "has more pixels than the limit of 40,000,000"),
    ("not_api", "did not answer as the images API does"),
])
def test_a_bad_answer_is_refused_with_its_reason_and_nothing_is_stored(mode, says, owner, annotator, image_server):
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    image_server.mode = mode
    state = t2i.start(user=annotator, task=task)
    with pytest.raises(RuleError) as refused:
        t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit on a table")
    assert says in refused.value.message and "Nothing was saved" in refused.value.message
    assert refused.value.status_code == 502
    assert image_server.requests[-1]["body"]["response_format"] == "b64_json"
    _nothing_stored(task)


def test_a_generator_that_is_down_is_refused_and_nothing_is_stored(owner, annotator, tiny_pipeline_dir, settings):
    server = start_image_server(tiny_pipeline_dir)
    url = server.url
    allow_local_server(settings, url)
    server.stop()  # its port is closed: connections are refused
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, url)
    state = t2i.start(user=annotator, task=task)
    with pytest.raises(RuleError) as refused:
        t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit on a table")
    assert refused.value.status_code == 503
    assert "The image generator 'tiny-sd-endpoint' failed: The connection to the endpoint failed" in refused.value.message
    _nothing_stored(task)


def test_the_same_server_answering_properly_gives_stored_images(owner, annotator, image_server):
    task = nibbler_task(owner)
    add_context(task)
    model = endpoint_generator(task, image_server.url)
    state = t2i.start(user=annotator, task=task)
    state = t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit on a table")
    body = image_server.requests[-1]["body"]
    assert (body["n"], body["size"], body["model"], body["response_format"]) == (2, "64x64", "tiny-sd", "b64_json")
    assert state["generator"]["model_id"] == model.pk and state["generator"]["source"] == "endpoint"
    assert ContextImage.objects.filter(task=task, sha256__in=[i["sha256"] for i in state["images"]]).count() == len(
        {i["sha256"] for i in state["images"]})
