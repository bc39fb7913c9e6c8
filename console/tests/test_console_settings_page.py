"""The console's settings page: saves through the settings service, shows field errors while
keeping what the owner typed, refuses a save from a stale form with a message, previews Markdown."""

from tasks.models import Task


def _form(task, **changes):
    data = {
        "name": task.name, "instructions": task.instructions, "labels": "\n".join(task.labels),
        "validations_needed": task.validations_needed, "daily_example_cap": task.config.get("daily_example_cap", 0),
        "content_warning": task.content_warning, "version": task.version,
    }
    return {**data, **changes}


def test_an_owner_saves_labels_and_instructions(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/", _form(sentiment_task, instructions="New *rules*.", labels="positive\nnegative\n"))

    assert response.status_code == 302
    task = Task.objects.get(pk=sentiment_task.pk)
    assert task.instructions == "New *rules*." and task.labels == ["positive", "negative"]
    assert "Settings saved." in client.get(response["Location"]).content.decode()


def test_field_errors_keep_what_was_typed(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/", _form(sentiment_task, instructions="Typed text.", validations_needed=50, labels="a\na"))

    page = response.content.decode()
    assert response.status_code == 400
    assert 'data-error-for="validations_needed"' in page and 'data-error-for="labels"' in page
    assert "Typed text." in page
    assert Task.objects.get(pk=sentiment_task.pk).instructions == sentiment_task.instructions


def test_a_save_from_a_stale_form_is_refused_with_a_message(client, owner, admin_user, sentiment_task):
    loaded = _form(sentiment_task)
    client.force_login(admin_user)
    client.post("/tasks/sentiment/console/", {**loaded, "instructions": "The admin was first."})

    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/", {**loaded, "instructions": "The owner's edit."})

    page = response.content.decode()
    assert response.status_code == 409
    assert "Another owner saved the settings" in page and "The owner&#x27;s edit." in page
    assert Task.objects.get(pk=sentiment_task.pk).instructions == "The admin was first."


def test_the_preview_renders_markdown_without_scripts(client, owner, sentiment_task):
    client.force_login(owner)
    html = client.post("/tasks/sentiment/console/preview", {"instructions": "**bold** <script>alert(1)</script>"}).content.decode()
    assert "<strong>bold</strong>" in html and "<script>" not in html
