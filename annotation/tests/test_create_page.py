"""The create page shows a context and the task's fields; it needs a log-in and a model in the loop."""

from annotation.tests.helpers import HTMX, token_of


def test_it_sends_visitors_to_log_in(client, sentiment_task):
    response = client.get(f"/tasks/{sentiment_task.code}/write/")
    assert response.status_code == 302
    assert "/accounts/login/?next=" in response["Location"]


def test_it_shows_a_context_and_prefills_the_sentence_for_sentiment(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    response = client.get(f"/tasks/{sentiment_task.code}/write/")
    assert response.status_code == 200
    page = response.content.decode()
    prompt = sentiment_task.current_round().contexts.get(uid=page.split('data-context="')[1].split('"')[0]).data["prompt"]
    assert f'data-context-field="prompt">{prompt}</div>' in page
    assert f">\n{prompt}</textarea>" in page  # the sentence starts as the prompt
    assert 'value="positive"' in page and 'value="neutral"' in page
    assert token_of(response)


def test_it_shows_the_passage_to_select_in_for_qa(client, annotator, qa_task, qa_context):
    client.force_login(annotator)
    page = client.get(f"/tasks/{qa_task.code}/write/").content.decode()
    assert "data-passage" in page and 'name="answer_text"' in page and 'name="answer_start"' in page
    assert "Selected answer" in page
    assert "js/annotate.js" in page


def test_it_says_when_the_round_has_no_model_in_the_loop(client, annotator, hate_task):
    client.force_login(annotator)
    response = client.get(f"/tasks/{hate_task.code}/write/")
    assert response.status_code == 409
    assert "no model in the loop" in response.content.decode()


def test_it_gives_a_new_context_other_than_the_one_shown(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    response = client.get(f"/tasks/{sentiment_task.code}/write/context?exclude={sentiment_context.pk}", **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert page.startswith('<section id="workspace"')
    assert f'data-context="{sentiment_context.uid}"' not in page


def test_it_sends_an_htmx_visitor_to_log_in_with_hx_redirect(client, sentiment_task):
    response = client.post(f"/tasks/{sentiment_task.code}/write/submit", **HTMX)
    assert response.status_code == 401
    assert response["HX-Redirect"].startswith("/accounts/login/?next=")
