"""A validator of a task with a content warning (a red-teaming task) reads it before the review queue
shows them an example, once per session, as annotators do before writing."""

from tasks.models import Task


def test_the_queue_shows_the_warning_first(client, validator, sentiment_task):
    Task.objects.filter(pk=sentiment_task.pk).update(content_warning="Offensive language ahead.")
    client.force_login(validator)
    queue = f"/tasks/{sentiment_task.code}/validate/"

    first = client.get(queue)
    accepted = client.post(f"/tasks/{sentiment_task.code}/write/warning", {"next": queue})
    second = client.get(queue)

    assert b"data-content-warning" in first.content and b"Offensive language ahead." in first.content
    assert accepted["Location"] == queue
    assert b"data-content-warning" not in second.content
