"""``POST /api/v1/examples``: the model in the loop answers and the server decides whether it was fooled."""

from annotation.models import Example
from tasks.loop.registry import get_predictor
from tests.api.conftest import client_for

TEXT = "The waiter was slow but the pasta made up for it."


def _model_label(model, text):
    return get_predictor(model).predict([{"text": text}])[0]["label"]


def _context(task):
    return task.current_round().contexts.order_by("pk").first()


def test_an_example_that_fools_the_model_says_so(annotator, sentiment_task, sentiment_model):
    fooling_label = next(label for label in sentiment_task.labels if label != _model_label(sentiment_model, TEXT))

    response = client_for(annotator).post(
        "/api/v1/examples",
        {"task": "sentiment", "context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": fooling_label}},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["model_wrong"] is True
    assert body["model_output"]["label"] != fooling_label
    assert set(body["model_output"]["probs"]) == {"positive", "negative", "neutral"}
    example = Example.objects.get(pk=body["id"])
    assert (example.author, example.model, example.model_wrong) == (annotator, sentiment_model, True)


def test_an_example_the_model_gets_right_is_not_fooling(annotator, sentiment_task, sentiment_model):
    label = _model_label(sentiment_model, TEXT)

    response = client_for(annotator).post(
        "/api/v1/examples", {"context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": label}}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["model_wrong"] is False


def test_it_refuses_a_model_wrong_sent_by_the_client(annotator, sentiment_task, sentiment_model):
    response = client_for(annotator).post(
        "/api/v1/examples",
        {"context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": "positive"}, "model_wrong": True},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["field"] == "model_wrong"
    assert not Example.objects.exists()


def test_it_passes_on_the_services_message_for_a_label_outside_the_task(annotator, sentiment_task, sentiment_model):
    response = client_for(annotator).post(
        "/api/v1/examples", {"context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": "mixed"}}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_label"
    assert not Example.objects.exists()


def test_it_refuses_a_context_of_another_task(annotator, sentiment_task, nli_task, sentiment_model):
    nli_context = nli_task.current_round().contexts.first()

    response = client_for(annotator).post(
        "/api/v1/examples",
        {"task": "sentiment", "context": nli_context.pk, "input": {"text": TEXT}, "target": {"label": "positive"}},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["detail"] == f"context: Context {nli_context.pk} belongs to task nli, not sentiment."
    assert not Example.objects.exists()


def test_it_refuses_a_researcher_without_the_annotator_role(researcher, sentiment_task, sentiment_model):
    response = client_for(researcher).post(
        "/api/v1/examples", {"context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": "positive"}}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["code"] == "not_annotator"
    assert not Example.objects.exists()


def test_it_answers_409_when_the_round_has_no_model_in_the_loop(annotator, sentiment_task):
    response = client_for(annotator).post(
        "/api/v1/examples", {"context": _context(sentiment_task).pk, "input": {"text": TEXT}, "target": {"label": "positive"}}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["code"] == "no_model_in_loop"
