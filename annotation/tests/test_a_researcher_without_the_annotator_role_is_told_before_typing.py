"""A signed-in user without the annotator role (a researcher) is told before any typing that writing
examples needs that role, with what their roles allow instead: the create page shows no form (403),
the task page and the task list offer no *Write examples*. An annotator, or someone who may still
pass the task's quiz (a pass grants the role), sees the form as before."""

import pytest

from annotation.models import Qualification, QuizItem

REFUSAL = "needs the annotator role, which your account does not have"


@pytest.fixture
def signed_in(client):
    def sign_in(user):
        client.force_login(user)
        return client
    return sign_in


def test_the_create_page_says_it_before_the_form(signed_in, researcher, sentiment_task, sentiment_context):
    page = signed_in(researcher).get(f"/tasks/{sentiment_task.code}/write/")
    html = page.content.decode()

    assert page.status_code == 403
    assert REFUSAL in html and "data-cannot-write" in html
    assert f'href="/tasks/{sentiment_task.code}/sandbox/"' in html and "submit a model" in html
    assert "<textarea" not in html and 'name="token"' not in html


def test_the_task_page_and_the_list_offer_no_write_button(signed_in, researcher, sentiment_task, sentiment_context):
    client = signed_in(researcher)
    task_page = client.get(f"/tasks/{sentiment_task.code}/").content.decode()
    task_list = client.get("/").content.decode()

    assert REFUSAL in task_page and "Write examples for round" not in task_page
    card = task_list.split(f'data-task="{sentiment_task.code}"')[1].split('class="card task-card"')[0]
    assert "needs the annotator role" in card and "Write examples</a>" not in card


def test_an_annotator_still_gets_the_form(signed_in, annotator, sentiment_task, sentiment_context):
    client = signed_in(annotator)
    html = client.get(f"/tasks/{sentiment_task.code}/write/").content.decode()

    assert "<textarea" in html and "data-cannot-write" not in html
    assert "Write examples for round" in client.get(f"/tasks/{sentiment_task.code}/").content.decode()


def test_someone_who_may_pass_the_quiz_is_sent_to_it(signed_in, researcher, sentiment_task, sentiment_context):
    quiz = Qualification.objects.create(task=sentiment_task, instructions="Read this.")
    QuizItem.objects.create(qualification=quiz, input={"text": "Lovely."}, answer={"label": "positive"})

    page = signed_in(researcher).get(f"/tasks/{sentiment_task.code}/write/")

    assert page.status_code == 302 and f"/tasks/{sentiment_task.code}/qualification/" in page["Location"]
