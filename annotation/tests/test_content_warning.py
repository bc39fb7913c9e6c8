"""A task with a content warning shows it before a person's first example of the task."""

from tasks.models import Task


def test_the_warning_comes_first_then_the_write_page(client, annotator, sentiment_context):
    task = sentiment_context.round.task
    Task.objects.filter(pk=task.pk).update(content_warning="Offensive language ahead.")
    client.force_login(annotator)

    first = client.get(f"/tasks/{task.code}/write/")
    assert b"data-content-warning" in first.content and b"Offensive language ahead." in first.content

    client.post(f"/tasks/{task.code}/write/warning")
    second = client.get(f"/tasks/{task.code}/write/")
    assert b"data-content-warning" not in second.content and b'name="text"' in second.content


def test_a_task_without_a_warning_goes_straight_to_writing(client, annotator, sentiment_context):
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_context.round.task.code}/write/")
    assert b"data-content-warning" not in page.content
