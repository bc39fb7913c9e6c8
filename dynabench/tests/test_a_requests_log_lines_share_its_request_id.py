"""Every log line a request causes carries its request id, which the response names in
``X-Request-ID``; the request leaves one JSON line with its id, user id, route, status and duration."""

import json
import logging

import pytest

from dynabench import metrics, request_ids


class _Records(logging.Handler):
    """Keeps the records it gets, through the platform's request-id filter."""

    def __init__(self):
        super().__init__()
        self.records = []
        self.addFilter(request_ids.RequestIdFilter())

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def logged():
    handler = _Records()
    for name in ("", "dynabench.events"):
        logging.getLogger(name).addHandler(handler)
    previous = logging.getLogger("dynabench.events").level
    logging.getLogger("dynabench.events").setLevel(logging.INFO)
    yield handler.records
    logging.getLogger("dynabench.events").setLevel(previous)
    for name in ("", "dynabench.events"):
        logging.getLogger(name).removeHandler(handler)


def test_a_line_logged_while_serving_carries_the_id_of_the_response(client, db, logged):
    def noisy_source():
        logging.getLogger("dynabench.tests").warning("read while serving")
        return []

    metrics.register_source("noisy", noisy_source)
    try:
        response = client.get("/metrics")
    finally:
        metrics._sources.pop("noisy")

    line = next(r for r in logged if r.getMessage() == "read while serving")
    assert response["X-Request-ID"] and line.request_id == response["X-Request-ID"]


def test_the_request_leaves_one_json_line(client, db, annotator, logged):
    client.force_login(annotator)

    response = client.get("/healthz")

    lines = [json.loads(r.getMessage()) for r in logged if r.name == "dynabench.events"]
    mine = [line for line in lines if line["request_id"] == response["X-Request-ID"]]
    assert len(mine) == 1
    assert mine[0]["event"] == "request" and mine[0]["route"] == "healthz" and mine[0]["status"] == 200
    assert mine[0]["method"] == "GET" and mine[0]["duration_ms"] >= 0


def test_the_line_names_the_signed_in_user_by_id_only(client, db, annotator, logged):
    client.force_login(annotator)

    client.get("/")

    line = [json.loads(r.getMessage()) for r in logged if r.name == "dynabench.events"][-1]
    assert line["user_id"] == annotator.pk
    assert annotator.username not in json.dumps(line)


def test_outside_a_request_a_line_says_dash(logged):
    logging.getLogger("dynabench.tests").warning("no request here")

    assert logged[-1].request_id == "-"


def test_a_clients_own_request_id_is_not_believed(client, db):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="chosen-by-the-client-1")

    assert response["X-Request-ID"] != "chosen-by-the-client-1"


def test_a_trusted_proxys_request_id_is_kept(client, db, settings):
    settings.TRUSTED_PROXY_COUNT = 1

    response = client.get("/healthz", HTTP_X_REQUEST_ID="from-the-proxy-1234")

    assert response["X-Request-ID"] == "from-the-proxy-1234"


def test_the_settings_put_the_filter_on_the_console_and_one_bare_line_per_event():
    from django.conf import settings

    assert settings.LOGGING["handlers"]["console"]["filters"] == ["request_id"]
    assert "%(request_id)s" in settings.LOGGING["formatters"]["line"]["format"]
    assert settings.LOGGING["formatters"]["bare"]["format"] == "%(message)s"
