"""``update_endpoint``: a task's owner (or the model's submitter) changes an endpoint's connection with the
checks of creation; the key is kept when left empty, cleared on request, and never follows the URL to
another server; refusals change nothing."""

import pytest

from dynabench.errors import NotAllowed, RuleError
from tasks.loop.endpoints.keys import api_key, has_api_key
from tasks.loop.endpoints.records import update_endpoint
from tasks.models import Endpoint, EndpointResponse
from tasks.loop.registry import get_predictor

KEY = "sk-kept-between-saves-51c2"


@pytest.fixture
def model(sentiment_task, make_endpoint_model):
    return make_endpoint_model(sentiment_task, api_key=KEY)


def test_a_new_model_name_gets_a_new_checksum_and_keeps_the_key(model, owner, endpoint_server):
    checksum = model.checksum

    changed = update_endpoint(model=model, acting_user=owner, model_name="tiny-gpt2-v2", timeout_s=5)

    endpoint = Endpoint.objects.get(model=model)
    assert endpoint.model_name == "tiny-gpt2-v2" and endpoint.timeout_s == 5
    assert changed.checksum != checksum and api_key(endpoint) == KEY
    get_predictor(changed).predict([{"text": "the food was great"}])
    assert endpoint_server.requests[-1]["body"]["model"] == "tiny-gpt2-v2"
    assert endpoint_server.requests[-1]["authorization"] == f"Bearer {KEY}"


def test_a_timeout_alone_keeps_the_checksum(model, owner):
    assert update_endpoint(model=model, acting_user=owner, timeout_s=3).checksum == model.checksum


def test_remove_key_clears_it_and_a_typed_key_replaces_it(model, owner):
    update_endpoint(model=model, acting_user=owner, remove_key=True)
    assert not has_api_key(Endpoint.objects.get(model=model))

    update_endpoint(model=model, acting_user=owner, api_key="sk-new")
    assert api_key(Endpoint.objects.get(model=model)) == "sk-new"


def test_a_url_off_the_allow_list_is_refused_and_nothing_changes(model, owner):
    checksum = model.checksum

    with pytest.raises(RuleError) as refused:
        update_endpoint(model=model, acting_user=owner, base_url="http://169.254.169.254/v1", model_name="other")

    assert refused.value.field == "base_url"
    endpoint = Endpoint.objects.get(model=model)
    assert endpoint.model_name == "tiny-gpt2" and "169.254" not in endpoint.base_url
    model.refresh_from_db()
    assert model.checksum == checksum and api_key(endpoint) == KEY


def test_the_stored_key_does_not_follow_the_url_to_another_server(model, owner, endpoint_server, settings):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = [f"127.0.0.1/32:{endpoint_server.port}", f"127.0.0.2/32:{endpoint_server.port}"]

    with pytest.raises(RuleError) as refused:
        update_endpoint(model=model, acting_user=owner, base_url=f"http://127.0.0.2:{endpoint_server.port}")

    assert refused.value.field == "api_key" and "type the key again" in refused.value.message
    update_endpoint(model=model, acting_user=owner, base_url=endpoint_server.url + "/v1")  # same server: kept
    assert api_key(Endpoint.objects.get(model=model)) == KEY


def test_people_who_own_neither_the_task_nor_the_model_may_not(model, outsider):
    with pytest.raises(NotAllowed):
        update_endpoint(model=model, acting_user=outsider, model_name="mine")


def test_a_submitter_who_does_not_own_the_task_names_no_key_variable(sentiment_task, make_endpoint_model, researcher):
    model = make_endpoint_model(sentiment_task, owner=researcher)

    with pytest.raises(RuleError) as refused:
        update_endpoint(model=model, acting_user=researcher, api_key_env="DYNABENCH_ENDPOINT_KEY_PLATFORM")

    assert refused.value.code == "endpoint_bad_key_env"
    update_endpoint(model=model, acting_user=researcher, model_name="tiny-gpt2-mine")  # the rest is theirs to change


def test_answers_cached_from_another_url_are_dropped(model, owner, endpoint_server):
    get_predictor(model).predict([{"text": "the food was great"}])
    assert EndpointResponse.objects.filter(model=model).exists()

    update_endpoint(model=model, acting_user=owner, base_url=endpoint_server.url + "/v1", api_key=KEY)

    assert not EndpointResponse.objects.filter(model=model).exists()
