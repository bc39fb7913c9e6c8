"""Every admin list, add page and change page renders for an admin."""

import pytest
from django.contrib import admin
from django.urls import reverse

OUR_APPS = {"tasks", "annotation", "validation", "leaderboard", "auth"}
ADDED_BY_SERVICES_ONLY = {"example", "validation", "evaluationrun", "leaderboardcache", "golditem", "validatorstanding", "upload"}
MODELS = sorted(
    (m._meta.app_label, m._meta.model_name) for m in admin.site._registry if m._meta.app_label in OUR_APPS
)


def test_every_entity_has_an_admin():
    assert {name for _, name in MODELS} >= {
        "task", "round", "context", "mlmodel", "dataset", "datasetitem", "example", "validation",
        "evaluationrun", "leaderboardconfig", "user", "group",
    }


@pytest.mark.parametrize("app_label, model_name", MODELS)
def test_its_list_renders_with_rows_and_a_search(client, admin_user, one_of_everything, app_label, model_name):
    client.force_login(admin_user)

    response = client.get(reverse(f"admin:{app_label}_{model_name}_changelist"))
    searched = client.get(reverse(f"admin:{app_label}_{model_name}_changelist"), {"q": "a"})

    assert response.status_code == 200
    assert searched.status_code == 200


@pytest.mark.parametrize("app_label, model_name", MODELS)
def test_its_add_page_renders_unless_rows_come_from_services(client, admin_user, one_of_everything, app_label, model_name):
    client.force_login(admin_user)

    response = client.get(reverse(f"admin:{app_label}_{model_name}_add"))

    assert response.status_code == (403 if model_name in ADDED_BY_SERVICES_ONLY else 200)


@pytest.mark.parametrize("model_name", sorted(name for app, name in MODELS if app != "auth"))
def test_its_change_page_renders(client, admin_user, one_of_everything, model_name):
    obj = one_of_everything[model_name]
    client.force_login(admin_user)

    response = client.get(reverse(f"admin:{obj._meta.app_label}_{model_name}_change", args=[obj.pk]))

    assert response.status_code == 200
