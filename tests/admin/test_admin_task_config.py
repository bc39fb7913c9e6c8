"""The task config is edited as JSON in the admin; schema errors are shown naming the field at fault."""

import json

from django.urls import reverse

from tasks.models import Task


def _form_data(task, config):
    return {
        "code": task.code, "name": task.name, "kind": task.kind, "active": "on", "instructions": task.instructions,
        "config": config, "rounds-TOTAL_FORMS": "0", "rounds-INITIAL_FORMS": "0",
    }


def test_it_shows_each_schema_error_under_the_config_and_keeps_the_old_config(client, admin_user, nli_task):
    broken = dict(nli_task.config, perf_metric="perplexity", validations_needed=0)
    client.force_login(admin_user)

    response = client.post(reverse("admin:tasks_task_change", args=[nli_task.pk]), _form_data(nli_task, json.dumps(broken)))

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["config"]
    assert any(e.startswith("config.perf_metric: 'perplexity' is not one of") for e in errors)
    assert any(e.startswith("config.validations_needed: 0 is less than the minimum of 1") for e in errors)
    nli_task.refresh_from_db()
    assert nli_task.config["perf_metric"] == "accuracy"


def test_it_refuses_text_that_is_not_json(client, admin_user, nli_task):
    client.force_login(admin_user)

    response = client.post(reverse("admin:tasks_task_change", args=[nli_task.pk]), _form_data(nli_task, "{labels: [e, n]"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["config"] == ["Enter a valid JSON."]


def test_it_saves_a_valid_change(client, admin_user, nli_task):
    client.force_login(admin_user)
    config = dict(nli_task.config, validations_needed=5)

    response = client.post(reverse("admin:tasks_task_change", args=[nli_task.pk]), _form_data(nli_task, json.dumps(config)))

    assert response.status_code == 302
    assert Task.objects.get(pk=nli_task.pk).validations_needed == 5
