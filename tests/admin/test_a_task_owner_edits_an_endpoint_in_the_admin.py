"""A task owner who is staff but no superuser sees an endpoint model's connection in the admin (only
whether a key is set) and changes it through ``update_endpoint``, with the same checks as the console."""

import json

import pytest

from tasks.loop.endpoints.keys import api_key
from tasks.models import Endpoint
from tasks.services import grant_owner_admin_access

KEY = "sk-admin-edit-22aa"


@pytest.fixture
def staff_owner(owner):
    grant_owner_admin_access(owner)
    return owner


@pytest.fixture
def model(sentiment_task, make_endpoint_model):
    return make_endpoint_model(sentiment_task, name="tiny via admin", api_key=KEY, model_name="tiny")


def _post(client, model, endpoint_server, **changes):
    endpoint = Endpoint.objects.get(model=model)
    data = {
        "task": model.task_id, "owner": "", "name": model.name, "description": "", "kind": model.kind, "path": "",
        "status": model.status, "archive": "", "archive_kept_bytes": 0, "unpack_job_id": "", "unpack_attempts": 0,
        "endpoint-TOTAL_FORMS": 1, "endpoint-INITIAL_FORMS": 1, "endpoint-MIN_NUM_FORMS": 0, "endpoint-MAX_NUM_FORMS": 1,
        "endpoint-0-id": endpoint.pk, "endpoint-0-model": model.pk, "endpoint-0-base_url": endpoint.base_url,
        "endpoint-0-api": "chat", "endpoint-0-model_name": endpoint.model_name, "endpoint-0-params": json.dumps(endpoint.params),
        "endpoint-0-prompt": "{}", "endpoint-0-api_key_env": "", "endpoint-0-timeout_s": endpoint.timeout_s,
        "endpoint-0-max_retries": endpoint.max_retries, "endpoint-0-max_concurrency": endpoint.max_concurrency,
        "endpoint-0-api_key": "",
    }
    data.update({f"endpoint-0-{k}": v for k, v in changes.items()})
    return client.post(f"/admin/tasks/mlmodel/{model.pk}/change/", data)


def test_the_owner_sees_the_connection_but_not_the_key(client, staff_owner, model):
    client.force_login(staff_owner)

    html = client.get(f"/admin/tasks/mlmodel/{model.pk}/change/").content.decode()

    assert 'name="endpoint-0-model_name"' in html and "a key is set" in html and KEY not in html


def test_the_owner_changes_the_model_name_and_the_checksum_follows(client, staff_owner, model, endpoint_server):
    client.force_login(staff_owner)
    checksum = model.checksum

    response = _post(client, model, endpoint_server, model_name="tiny-gpt2")

    assert response.status_code == 302, response.content.decode()[:3000]
    endpoint = Endpoint.objects.get(model=model)
    model.refresh_from_db()
    assert endpoint.model_name == "tiny-gpt2" and model.checksum != checksum and api_key(endpoint) == KEY


def test_a_url_off_the_allow_list_is_a_field_error(client, staff_owner, model, endpoint_server):
    client.force_login(staff_owner)

    response = _post(client, model, endpoint_server, base_url="http://169.254.169.254/v1")

    assert response.status_code == 200 and "link-local" in response.content.decode()
    assert "169.254" not in Endpoint.objects.get(model=model).base_url
