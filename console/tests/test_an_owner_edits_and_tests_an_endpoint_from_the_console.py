"""On the console an owner sees an endpoint model's connection (only whether a key is set, never the
key), changes it through ``update_endpoint`` (refusals on the form with their 4xx, nothing changed), and
*Test connection* shows the endpoint's answer or its own reason, escaped. Other people get 403."""

import pytest

from tasks.loop.endpoints.keys import api_key
from tasks.models import Endpoint

KEY = "sk-console-edit-9b1e"


@pytest.fixture
def model(sentiment_task, make_endpoint_model):
    return make_endpoint_model(sentiment_task, name="tiny via vLLM", api_key=KEY, model_name="tiny")


def _form(endpoint_server, **changes):
    data = {"base_url": endpoint_server.url + "/v1", "model_name": "tiny", "api": "chat", "temperature": 0, "max_tokens": 8,
            "seed": 1, "timeout_s": 10, "max_retries": 1, "max_concurrency": 2, "api_key": "", "api_key_env": ""}
    return {**data, **changes}


def test_the_page_says_a_key_is_set_and_never_shows_it(client, owner, sentiment_task, model):
    client.force_login(owner)

    html = client.get(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/").content.decode()
    rounds = client.get(f"/tasks/{sentiment_task.code}/console/rounds/").content.decode()

    assert "a key is set" in html and KEY not in html and 'value="tiny"' in html
    assert f"/console/endpoints/{model.pk}/" in rounds


def test_saving_changes_the_model_name_and_an_empty_key_keeps_the_stored_one(client, owner, sentiment_task, model, endpoint_server):
    client.force_login(owner)

    response = client.post(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/", _form(endpoint_server, model_name="tiny-gpt2"))

    assert response.status_code == 302
    endpoint = Endpoint.objects.get(model=model)
    assert endpoint.model_name == "tiny-gpt2" and api_key(endpoint) == KEY
    page = client.get(response.url).content.decode()
    assert "saved" in page and "evaluates it again" in page


def test_a_refused_url_shows_on_the_form_and_changes_nothing(client, owner, sentiment_task, model, endpoint_server):
    client.force_login(owner)

    response = client.post(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/",
                           _form(endpoint_server, base_url="http://169.254.169.254/v1", model_name="tiny-gpt2"))

    assert response.status_code == 400 and "link-local" in response.content.decode()
    assert Endpoint.objects.get(model=model).model_name == "tiny"


def test_test_connection_shows_the_servers_reason_then_the_answer(client, owner, sentiment_task, model, endpoint_server):
    client.force_login(owner)
    endpoint_server.pinned = True
    url = f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/test"

    failed = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    Endpoint.objects.filter(model=model).update(model_name="tiny-gpt2")
    answered = client.post(url, HTTP_HX_REQUEST="true").content.decode()

    assert "data-connection-failed" in failed and "Server is pinned to &#x27;tiny-gpt2&#x27;; requested &#x27;tiny&#x27;" in failed
    assert "data-connection-ok" in answered and "data-connection-answer" in answered
    assert [r["body"]["max_tokens"] for r in endpoint_server.requests] == [8, 8]
    assert all(r["authorization"] == f"Bearer {KEY}" for r in endpoint_server.requests) and KEY not in failed + answered


def test_without_javascript_the_result_comes_on_the_whole_page(client, owner, sentiment_task, model, endpoint_server):
    client.force_login(owner)
    endpoint_server.pinned = True

    response = client.post(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/test")

    assert response.status_code == 502 and "Save connection" in response.content.decode()
    assert "requested &#x27;tiny&#x27;" in response.content.decode()


def test_people_who_do_not_own_the_task_get_403(client, annotator, sentiment_task, model, endpoint_server):
    client.force_login(annotator)

    assert client.get(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/").status_code == 403
    assert client.post(f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/test").status_code == 403
    assert endpoint_server.requests == []
