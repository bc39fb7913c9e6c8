"""``/metrics`` answers a loopback client, or anyone with the bearer token when one is set; nobody else."""

import pytest


def test_it_serves_the_prometheus_text_format_to_loopback(client, db):
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert "# TYPE dynabench_http_request_duration_seconds histogram" in response.content.decode()


def test_it_refuses_another_address(client, db):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5").status_code == 403


def test_it_serves_anyone_with_the_token_when_one_is_set(client, db, settings):
    settings.DYNABENCH_METRICS_TOKEN = "a-long-scrape-token"

    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5", HTTP_AUTHORIZATION="Bearer a-long-scrape-token").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.5").status_code == 403


def test_a_request_relayed_by_a_trusted_proxy_counts_from_its_client(client, db, settings):
    settings.TRUSTED_PROXY_COUNT = 1

    relayed = client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5")

    assert relayed.status_code == 403


@pytest.mark.parametrize("address", ["::1", "127.0.0.2"])
def test_every_loopback_address_counts(client, db, address):
    assert client.get("/metrics", REMOTE_ADDR=address).status_code == 200


def test_it_is_a_404_when_metrics_are_off(client, db, settings):
    settings.DYNABENCH_METRICS = False

    assert client.get("/metrics").status_code == 404
