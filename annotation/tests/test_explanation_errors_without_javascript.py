"""Without JavaScript, a refused explanation comes back on the result page with its message and the
text kept (a saved one still goes on to My examples)."""

from annotation.services import create_example
from annotation.tests.conftest import model_label, other_label

TEXT = "Not bad at all, for once."


def fooling_example(annotator, task, context):
    label = other_label(task, model_label(task, TEXT))
    return create_example(user=annotator, context=context, input={"text": TEXT}, target={"label": label})


def test_a_too_long_explanation_is_shown_again_with_its_message(client, annotator, sentiment_task, sentiment_context):
    example = fooling_example(annotator, sentiment_task, sentiment_context)
    client.force_login(annotator)

    response = client.post(f"/my/examples/{example.pk}/explain", {"example_explanation": "why " * 300})

    html = response.content.decode()
    assert response.status_code == 422
    assert "the limit is 1000" in html
    assert 'aria-describedby="id_example_explanation_error"' in html and 'id="id_example_explanation_error"' in html
    assert "why why why" in html  # what was typed is kept
    assert "You fooled the model!" in html
    example.refresh_from_db()
    assert "example_explanation" not in example.metadata


def test_a_saved_explanation_goes_on_to_my_examples(client, annotator, sentiment_task, sentiment_context):
    example = fooling_example(annotator, sentiment_task, sentiment_context)
    client.force_login(annotator)

    response = client.post(f"/my/examples/{example.pk}/explain", {"example_explanation": "double negation"})

    assert response.status_code == 302 and response["Location"] == "/my/examples/"
