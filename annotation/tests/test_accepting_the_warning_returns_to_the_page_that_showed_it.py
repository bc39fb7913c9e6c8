"""*I understand, continue* on a task's content warning goes back to the page that showed it, its query
kept: the chat page's ``?mode=conversation`` starts the conversation instead of asking for the mode
again. A ``next`` that is not a page of the task goes to the create page."""

from tasks.models import Task


def test_the_chat_page_keeps_its_mode(client, annotator, chat_task):
    Task.objects.filter(pk=chat_task.pk).update(content_warning="Harmful text ahead.")
    client.force_login(annotator)
    wanted = f"/tasks/{chat_task.code}/chat/?mode=conversation"

    warning = client.get(wanted)
    accepted = client.post(f"/tasks/{chat_task.code}/write/warning", {"next": wanted})

    assert b"data-content-warning" in warning.content and f'value="{wanted}"'.encode() in warning.content
    assert accepted.status_code == 302 and accepted["Location"] == wanted


def test_a_foreign_next_goes_to_the_create_page(client, annotator, sentiment_context):
    task = sentiment_context.round.task
    Task.objects.filter(pk=task.pk).update(content_warning="Offensive language ahead.")
    client.force_login(annotator)

    for elsewhere in ("https://example.org/tasks/x/", "/tasks/another-task/write/", "//example.org/"):
        accepted = client.post(f"/tasks/{task.code}/write/warning", {"next": elsewhere})
        assert accepted["Location"] == f"/tasks/{task.code}/write/", elsewhere
