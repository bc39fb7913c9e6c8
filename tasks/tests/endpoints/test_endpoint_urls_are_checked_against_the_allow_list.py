"""Server-side request forgery is refused: non-http(s) and file URLs, credentials in the URL, hosts off
the allow-list, link-local metadata addresses (even when listed), and the platform's own network unless
a network entry names it; an answer larger than the bound is refused too."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.records import create_endpoint_model
from tasks.loop.endpoints.urls import check_url
from tasks.models import MLModel
from tasks.loop.registry import get_predictor


@pytest.mark.parametrize("url, code", [
    ("file:///etc/passwd", "endpoint_bad_url"),
    ("gopher://127.0.0.1:70/", "endpoint_bad_url"),
    ("http://user:secret@127.0.0.1:8000", "endpoint_bad_url"),
    ("http://169.254.169.254/latest/meta-data", "endpoint_url_not_allowed"),
    ("http://[fe80::1]:8000", "endpoint_url_not_allowed"),
    ("http://10.0.0.5:8000", "endpoint_url_not_allowed"),
    ("http://localhost:8000", "endpoint_url_not_allowed"),
])
def test_it_refuses_urls_the_platform_must_not_call(settings, url, code):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["169.254.0.0/16", "[fe80::]/10:8000", "localhost:8000", "*.example.org"]
    with pytest.raises(RuleError) as refused:
        check_url(url)
    assert refused.value.code == code


def test_a_listed_network_is_allowed_and_nothing_is_allowed_by_default(settings):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["127.0.0.1/32:8000"]
    assert check_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = []
    with pytest.raises(RuleError, match="not on the platform's endpoint allow-list"):
        check_url("http://127.0.0.1:8000")


@pytest.mark.django_db
def test_no_record_is_made_for_a_refused_url(sentiment_task, endpoint_server):
    with pytest.raises(RuleError):
        create_endpoint_model(task=sentiment_task, owner=None, name="meta", base_url="http://169.254.169.254", model_name="x")
    assert not MLModel.objects.filter(name="meta").exists()


@pytest.mark.django_db
def test_a_url_taken_off_the_allow_list_is_refused_before_the_call(sentiment_task, make_endpoint_model, endpoint_server, settings):
    model = make_endpoint_model(sentiment_task)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = []
    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"text": "the food was great"}])
    assert refused.value.code == "endpoint_url_not_allowed"
    assert endpoint_server.requests == []


@pytest.mark.django_db
def test_an_answer_over_the_size_bound_is_refused(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, max_retries=0)
    endpoint_server.huge = True
    with pytest.raises(RuleError, match="larger than 1048576 bytes"):
        get_predictor(model).predict([{"text": "the food was great"}])
