"""Before submitting, the create page says how many examples of the round the draft is close to (how
many of them the annotator's own) and lists the annotator's own closest examples, never anyone else's."""

from annotation.diversity import rules
from annotation.services import create_example
from annotation.tests.helpers import HTMX

MINE = "The soup was cold."
THEIRS = "THE SOUP WAS COLD."  # the same tokens for the tiny lower-casing tokenizer: cosine 1


def test_it_counts_close_examples_and_shows_only_the_annotators_own(client, annotator, owner, sentiment_task, sentiment_context,
                                                                     tiny_sentence_encoder):
    # given: a warn rule, one example of the annotator's and one of someone else's, both copies of the draft
    rules.set_round_rule(round=sentiment_context.round, acting_user=owner, threshold=0.999, mode="warn")
    create_example(user=annotator, context=sentiment_context, input={"text": MINE}, target={"label": "positive"})
    create_example(user=owner, context=sentiment_context, input={"text": THEIRS}, target={"label": "negative"})
    client.force_login(annotator)
    # when
    page = client.get(f"/tasks/{sentiment_task.code}/write/").content.decode()
    response = client.post(f"/tasks/{sentiment_task.code}/write/closeness", {"text": "the soup was cold."}, **HTMX)
    # then
    body = response.content.decode()
    assert 'id="closeness"' in page
    assert response.status_code == 200
    assert "Close to 2 examples in this round (1 of yours)." in body
    assert MINE in body and THEIRS not in body


def test_it_says_nothing_when_the_rule_is_off(client, annotator, sentiment_task, sentiment_context, tiny_sentence_encoder):
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/").content.decode()
    response = client.post(f"/tasks/{sentiment_task.code}/write/closeness", {"text": MINE}, **HTMX)
    assert 'id="closeness"' not in page
    assert response.status_code == 200 and response.content == b""
