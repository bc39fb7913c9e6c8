"""``GET``/``PATCH /api/v1/models/{id}/endpoint``: a task's owner reads an endpoint model's connection
(``key_set``, never the key) and changes part of it through ``update_endpoint``; refusals are 4xx with a
field, other people get 403."""

from tasks.loop.endpoints.keys import api_key
from tasks.models import Endpoint
from tests.api.conftest import client_for

KEY = "sk-api-patch-c0de"


def test_an_owner_reads_and_patches_the_model_name(owner, sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, api_key=KEY, model_name="tiny")
    api = client_for(owner)

    read = api.get(f"/api/v1/models/{model.pk}/endpoint")
    patched = api.patch(f"/api/v1/models/{model.pk}/endpoint", {"model_name": "tiny-gpt2", "api_key": ""}, format="json")

    assert read.status_code == 200 and read.json()["key_set"] is True and KEY not in read.content.decode()
    assert patched.status_code == 200, patched.json()
    assert patched.json()["model_name"] == "tiny-gpt2" and patched.json()["checksum"] != read.json()["checksum"]
    assert api_key(Endpoint.objects.get(model=model)) == KEY


def test_a_refused_url_is_a_400_naming_the_field(owner, sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task)

    response = client_for(owner).patch(f"/api/v1/models/{model.pk}/endpoint", {"base_url": "http://169.254.169.254"}, format="json")

    assert response.status_code == 400 and response.json()["field"] == "base_url"


def test_people_who_may_not_change_it_get_403(researcher, sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, model_name="tiny")
    model.published = True
    model.save()

    response = client_for(researcher).patch(f"/api/v1/models/{model.pk}/endpoint", {"model_name": "mine"}, format="json")

    assert response.status_code == 403 and Endpoint.objects.get(model=model).model_name == "tiny"
