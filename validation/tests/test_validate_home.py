"""``/validate/``: the queues a person may work, with how many examples wait in each."""

from validation.tests.conftest import make_example


def test_it_lists_each_task_with_its_waiting_examples(client, sentiment_task, qa_task, annotator, validator):
    make_example(sentiment_task, annotator, model_wrong=True)
    make_example(sentiment_task, annotator, model_wrong=True)
    make_example(sentiment_task, annotator, model_wrong=False)  # the task validates fooling examples only
    make_example(sentiment_task, annotator, model_wrong=True, retracted=True)
    client.force_login(validator)
    response = client.get("/validate/")
    assert response.status_code == 200
    rows = {task.code: waiting for task, _, waiting in response.context["rows"]}
    assert rows["sentiment"] == 2 and rows["qa"] == 0
    assert 'href="/tasks/sentiment/validate/"' in response.content.decode()


def test_without_the_role_it_says_whom_to_ask(client, sentiment_task, annotator):
    client.force_login(annotator)
    html = client.get("/validate/").content.decode()
    assert "You need the validator role" in html


def test_visitors_are_sent_to_log_in(client, default_tasks):
    assert client.get("/validate/").status_code == 302
