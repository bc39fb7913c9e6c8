"""A model behind an OpenAI-compatible endpoint answers a visual question answering example: the
server receives the question as text and the image as an ``image_url`` content part whose ``data:``
URL holds exactly the stored image's bytes; its answer is the model's answer, judged by VQA
accuracy. A completions endpoint, which cannot carry an image, is refused for such a task, also when
switched to completions afterwards."""

import pytest

from annotation.services import create_example
from dynabench.errors import RuleError
from tasks.data.images import ingest_images, open_image
from tasks.models import Context, ContextImage, Endpoint
from tasks.loop.registry import clear_cache
from tasks.metrics.vqa import vqa_accuracy
from tests.image_support import image_file
from tests.vqa_support import vqa_task


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    clear_cache()
    yield
    clear_cache()
    cache.clear()


def test_an_endpoint_model_sees_the_image_of_a_vqa_question(owner, annotator, endpoint_server, make_endpoint_model):
    task = vqa_task(owner)
    ingest_images(task=task, acting_user=owner, files=[image_file("c.png", shape="circle")], round_number=1)
    model = make_endpoint_model(task)
    round1 = task.rounds.get(number=1)
    round1.target_models.add(model)
    context = Context.objects.get(round=round1)
    example = create_example(user=annotator, context=context, input={"question": "what shape is in the picture"},
                             target={"answers": ["circle"]})
    [body] = [r["body"] for r in endpoint_server.requests]
    user = body["messages"][-1]
    assert user["role"] == "user"
    assert [part["type"] for part in user["content"]] == ["text", "image_url"]
    assert user["content"][0]["text"] == "what shape is in the picture"
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    fh, _ = open_image(ContextImage.objects.get(sha256=context.uid))
    with fh:
        assert endpoint_server.images == [fh.read()]
    assert "[image]" in endpoint_server.answered[0]
    answer = example.model_output["answer"]
    assert isinstance(answer, str) and example.model_output["endpoint"]["model"] == "tiny-gpt2"
    assert example.model_wrong == (vqa_accuracy(answer, ["circle"]) < 0.3)
    with pytest.raises(RuleError, match="chat API"):
        make_endpoint_model(task, name="completions", api="completions")
    Endpoint.objects.filter(model=model).update(api="completions")  # switched afterwards (the admin): refused, not sent blind
    with pytest.raises(RuleError, match="only the chat API carries"):
        create_example(user=annotator, context=context, input={"question": "is there a circle"}, target={"answers": ["yes"]})
    assert len(endpoint_server.requests) == 1
