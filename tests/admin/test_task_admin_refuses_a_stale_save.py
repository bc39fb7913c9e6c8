"""The admin's task page refuses a save made after someone changed the task elsewhere (the
console's version check), and a save from a fresh page bumps the version."""

from tasks.models import Task
from tasks.services import update_task_settings


def _form(client, task):
    page = client.get(f"/admin/tasks/task/{task.pk}/change/")
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data["config"] = form["config"].value()
    data["owners"] = [o.pk for o in task.owners.all()]
    for prefix in ("rounds",):
        data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    return {k: v for k, v in data.items() if v is not None}


def test_a_stale_admin_save_is_refused(client, admin_user, owner, sentiment_task):
    client.force_login(admin_user)
    data = _form(client, sentiment_task)
    update_task_settings(task=sentiment_task, acting_user=owner, version=sentiment_task.version, instructions="From the console.")

    response = client.post(f"/admin/tasks/task/{sentiment_task.pk}/change/", {**data, "instructions": "From the admin."})

    assert response.status_code == 200 and "Another owner saved this task" in response.content.decode()
    assert Task.objects.get(pk=sentiment_task.pk).instructions == "From the console."


def test_a_fresh_admin_save_goes_through_and_bumps_the_version(client, admin_user, sentiment_task):
    client.force_login(admin_user)
    data = _form(client, sentiment_task)
    before = Task.objects.get(pk=sentiment_task.pk).version

    response = client.post(f"/admin/tasks/task/{sentiment_task.pk}/change/", {**data, "instructions": "From the admin."})

    task = Task.objects.get(pk=sentiment_task.pk)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert task.instructions == "From the admin." and task.version == before + 1
