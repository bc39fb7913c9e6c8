"""Each request counts in ``dynabench_http_request_duration_seconds`` under its URL name, method and
status: never its raw path, so ids in URLs add no series."""

from dynabench.tests.metrics_support import scrape, value

HISTOGRAM = "dynabench_http_request_duration_seconds"


def _count(client, **labels) -> float:
    return value(scrape(client), f"{HISTOGRAM}_count", **labels) or 0.0


def test_it_counts_a_request_under_its_url_name_and_status(client, db):
    before = _count(client, route="healthz", method="GET", status=200)

    client.get("/healthz")
    client.get("/healthz")

    assert _count(client, route="healthz", method="GET", status=200) == before + 2


def test_a_path_that_names_nothing_counts_as_unmatched_not_by_its_path(client, db):
    before = _count(client, route="unmatched", status=404)

    client.get("/no-such-page/12345/")

    text = scrape(client)
    assert value(text, f"{HISTOGRAM}_count", route="unmatched", status=404) == before + 1
    labels = [line.split("}")[0] for line in text.splitlines() if "{" in line]  # not the values: a duration may hold those digits
    assert not [found for found in labels if "12345" in found or "no-such-page" in found]


def test_an_api_call_counts_under_the_routes_name(client, db, sentiment_task):
    client.get("/api/v1/tasks/sentiment")

    assert _count(client, route="task-detail", method="GET", status=200) >= 1


def test_nothing_is_recorded_when_metrics_are_off(db, settings):
    from django.test import Client
    from prometheus_client import REGISTRY

    def healthz_count():
        return REGISTRY.get_sample_value(f"{HISTOGRAM}_count", {"route": "healthz", "method": "GET", "status": "200"}) or 0.0

    settings.DYNABENCH_METRICS = False
    before = healthz_count()

    response = Client().get("/healthz")  # a new client: its middleware is built with the setting off

    assert response.status_code == 200 and response["X-Request-ID"]
    assert healthz_count() == before
