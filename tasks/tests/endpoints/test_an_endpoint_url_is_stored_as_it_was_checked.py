"""An endpoint's base URL is normalised once, and what the allow-list checked is what is stored and
called: a tab (or any space or control character) inside it is refused with a 400 that names the
field, on the console's form, in the API's submission and in its connection change; spaces around it
and a trailing slash are dropped before the check and the record keeps the URL without them.

A tab inside the host used to pass the check (Python's URL parser drops it) while the record kept it,
and *Test connection* then answered 500."""

from django.urls import reverse

from tasks.models import Endpoint, MLModel
from tests.api.conftest import client_for


def _with_tab(url: str) -> str:
    """``url`` with a tab inside its host (``http://127.0.0\\t.1:PORT``)."""
    return url.replace("127.0.0.1", "127.0.0\t.1")


def test_the_console_form_refuses_a_tab_naming_the_field(client, owner, sentiment_task, endpoint_server):
    client.force_login(owner)

    response = client.post(reverse("console:add_endpoint", args=[sentiment_task.code]), {
        "name": "tabbed", "base_url": _with_tab(endpoint_server.url) + "/v1", "model_name": "tiny-gpt2", "api": "chat",
        "timeout_s": 10, "max_retries": 0, "max_concurrency": 1,
    })

    assert response.status_code == 400
    assert response.context["endpoint_form"].errors["base_url"] == [
        "The base URL (base_url) contains a tab; a URL has no spaces or control characters inside it: remove it."]
    assert not MLModel.objects.filter(name="tabbed").exists()


def test_the_api_refuses_a_tab_on_submission_and_on_change(researcher, sentiment_task, endpoint_server, make_endpoint_model):
    api = client_for(researcher)
    body = {"task": sentiment_task.code, "name": "tabbed", "model_name": "tiny-gpt2"}

    submitted = api.post("/api/v1/models/endpoint", {**body, "base_url": _with_tab(endpoint_server.url)}, format="json")
    model = make_endpoint_model(sentiment_task, owner=researcher)
    changed = api.patch(f"/api/v1/models/{model.pk}/endpoint", {"base_url": endpoint_server.url + "/\nv1"}, format="json")

    for response, what in ((submitted, "a tab"), (changed, "a line break")):
        assert response.status_code == 400
        assert response.json()["code"] == "endpoint_bad_url" and response.json()["field"] == "base_url"
        assert f"The base URL (base_url) contains {what}" in response.json()["detail"]
    assert not MLModel.objects.filter(name="tabbed").exists()
    assert Endpoint.objects.get(model=model).base_url == endpoint_server.url


def test_spaces_around_the_url_and_a_trailing_slash_are_not_stored(researcher, sentiment_task, endpoint_server):
    api = client_for(researcher)

    created = api.post("/api/v1/models/endpoint", {"task": sentiment_task.code, "name": "spaced", "model_name": "tiny-gpt2",
                                                   "base_url": f" \t{endpoint_server.url}/v1/ \n"}, format="json")

    assert created.status_code == 201, created.content
    assert Endpoint.objects.get(model_id=created.json()["id"]).base_url == f"{endpoint_server.url}/v1"


def test_test_connection_refuses_a_url_stored_with_a_tab_instead_of_failing(client, owner, sentiment_task, make_endpoint_model,
                                                                             endpoint_server):
    model = make_endpoint_model(sentiment_task)
    Endpoint.objects.filter(model=model).update(base_url=_with_tab(endpoint_server.url))  # a record from before the rule
    client.force_login(owner)

    response = client.post(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/test", HTTP_HX_REQUEST="true")

    assert response.status_code < 500 and "data-connection-failed" in response.content.decode()
    assert "The base URL (base_url) contains a tab" in response.content.decode()
    assert endpoint_server.requests == []
