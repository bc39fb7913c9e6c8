"""A generation task may collect: an annotator writes a source sentence and its reference translation,
the seq2seq model in the loop translates it with ``generate``, and the server decides that it was
fooled when the sentence chrF++ of the translation against the reference is below the owner's threshold."""

import pytest
from django.urls import reverse

from annotation.services import create_example
from tasks.loop.model_checks import directory_checksum
from tasks.models import MLModel, Round, Task
from tasks.metrics.translation import sentence_chrfpp
from tests.tiny_models import build_tiny_seq2seq_model

CONFIG = {
    "context_fields": [{"name": "topic", "label": "Topic"}],
    "input_fields": [{"name": "source", "label": "Source sentence", "max_length": 500, "required": True}],
    "model_inputs": ["source"], "model_wrong": {"rule": "chrf_below", "threshold": 0.3}, "perf_metric": "chrfpp",
    "max_new_tokens": 4,
}


@pytest.fixture
def round1(db, tmp_path, admin_user):
    task = Task.objects.create(code="mt-collect", name="MT collect", kind="generation", config=CONFIG)
    path = build_tiny_seq2seq_model(tmp_path / "t5")
    model = MLModel.objects.create(task=task, owner=admin_user, name="tiny-t5", path=str(path),
                                   checksum=directory_checksum(path), status=MLModel.Status.UPLOADED)
    round_ = Round.objects.create(task=task, number=1)
    round_.target_models.add(model)
    round_.contexts.create(uid="c1", data={"topic": "museums"})
    return round_


def test_the_model_in_the_loop_translates_and_the_server_decides(round1, annotator):
    reference = "Le musée ouvre à neuf heures du matin."
    example = create_example(
        user=annotator, context=round1.contexts.get(), input={"source": "The museum opens at nine in the morning."},
        target={"references": [f"  {reference} "]},
    )
    assert example.target == {"references": [reference]}
    translation = example.model_output["translation"]
    assert isinstance(translation, str)
    assert example.model_wrong == (sentence_chrfpp(translation, [reference]) < 0.3)
    assert example.model_wrong  # an untrained decoder's four tokens are no French sentence


def test_the_create_page_asks_for_a_reference(round1, annotator, client):
    client.force_login(annotator)
    html = client.get(reverse("annotation:create", args=["mt-collect"])).content.decode()
    assert 'name="reference"' in html and "Reference translation" in html and 'name="source"' in html
