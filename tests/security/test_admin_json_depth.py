"""Issue 19 (worth a look): the admin's JSON fields refuse documents nested deeper than
``dynabench.jsonbounds.MAX_JSON_DEPTH`` with a field error, and show the form again.

Old code: Django's JSON form field parsed with plain ``json.loads``, so 5,000 nested brackets
raised ``RecursionError`` (a 500), and a 100-level document was stored.
"""

import pytest
from django import forms
from django.contrib import admin
from django.test import RequestFactory

from dynabench.admin_tools import BoundedJSONField
from dynabench.jsonbounds import MAX_JSON_DEPTH, json_depth
from tasks.models import Context, Dataset, DatasetItem, Task

RECURSION_BOMB = "[" * 5000 + "]" * 5000
TOO_DEEP = '{"prompt": ' + "[" * (MAX_JSON_DEPTH + 10) + '"x"' + "]" * (MAX_JSON_DEPTH + 10) + "}"


def _form_data(client, url: str, inline_prefixes=()) -> dict:
    form = client.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    for name, field in form.fields.items():
        if isinstance(field, forms.ModelMultipleChoiceField):
            data[name] = [getattr(v, "pk", v) for v in form[name].value() or []]
    for prefix in inline_prefixes:
        data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize("document", [RECURSION_BOMB, TOO_DEEP], ids=["5000-levels", "74-levels"])
def test_the_task_config_refuses_a_too_deep_document(client, admin_user, sentiment_task, document):
    client.force_login(admin_user)
    url = f"/admin/tasks/task/{sentiment_task.pk}/change/"
    before = Task.objects.get(pk=sentiment_task.pk).config

    response = client.post(url, {**_form_data(client, url, ["rounds"]), "config": document})

    assert response.status_code == 200
    assert f"more than {MAX_JSON_DEPTH} levels deep; flatten it" in response.content.decode()
    assert Task.objects.get(pk=sentiment_task.pk).config == before


@pytest.mark.parametrize("document", [RECURSION_BOMB, TOO_DEEP], ids=["5000-levels", "74-levels"])
def test_a_context_refuses_a_too_deep_document(client, admin_user, sentiment_task, document):
    client.force_login(admin_user)
    context = sentiment_task.current_round().contexts.first()
    url = f"/admin/tasks/context/{context.pk}/change/"

    response = client.post(url, {**_form_data(client, url), "data": document})

    assert response.status_code == 200 and "levels deep; flatten it" in response.content.decode()
    assert Context.objects.get(pk=context.pk).data == context.data


def test_a_document_at_the_limit_is_kept(client, admin_user, sentiment_task):
    client.force_login(admin_user)
    item = DatasetItem.objects.create(
        dataset=Dataset.objects.create(task=sentiment_task, name="deep", split="dev"), uid="1", input={"text": "Nice"},
        target={"label": "positive"},
    )
    url = f"/admin/tasks/datasetitem/{item.pk}/change/"
    deep = "[" * MAX_JSON_DEPTH + '"x"' + "]" * MAX_JSON_DEPTH

    response = client.post(url, {**_form_data(client, url), "metadata": deep})

    assert response.status_code == 302, response.content.decode()[:2000]
    assert json_depth(DatasetItem.objects.get(pk=item.pk).metadata) == MAX_JSON_DEPTH


def test_every_editable_json_field_of_every_admin_is_bounded(admin_user):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    unbounded = []
    for model, model_admin in admin.site._registry.items():
        forms_of = [(model, model_admin.get_form(request, None))]
        forms_of += [(i.model, i.get_formset(request, None).form) for i in model_admin.get_inline_instances(request, None)]
        for shown, form in forms_of:
            unbounded += [
                f"{shown._meta.label}.{name}" for name, field in form.base_fields.items()
                if isinstance(field, forms.JSONField) and not isinstance(field, BoundedJSONField)
            ]
    assert unbounded == []
