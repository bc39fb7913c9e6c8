"""The create page says how many examples remain under the task's daily cap."""

from annotation.limits import daily_allowance
from annotation.services import create_example


def test_the_allowance_counts_todays_examples(annotator, sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 3}
    sentiment_task.save()
    create_example(user=annotator, context=sentiment_context, input={"text": "One more thing."}, target={"label": "neutral"})
    allowance = daily_allowance(user=annotator, task=sentiment_task)
    assert (allowance.cap, allowance.written, allowance.remaining) == (3, 1, 2)


def test_the_create_page_shows_what_remains(client, annotator, sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 5}
    sentiment_task.save()
    client.force_login(annotator)
    html = client.get("/tasks/sentiment/write/").content.decode()
    assert "5 of 5 examples left today." in html


def test_no_cap_no_line(client, annotator, sentiment_task, sentiment_context):
    sentiment_task.config = {k: v for k, v in sentiment_task.config.items() if k != "daily_example_cap"}
    sentiment_task.save()
    assert daily_allowance(user=annotator, task=sentiment_task).remaining is None
    client.force_login(annotator)
    assert "left today" not in client.get("/tasks/sentiment/write/").content.decode()
