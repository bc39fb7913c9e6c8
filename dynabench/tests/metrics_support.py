"""Reading ``/metrics`` in tests: one sample's value by name and labels."""

from prometheus_client.parser import text_string_to_metric_families


def scrape(client) -> str:
    """The text of ``/metrics`` as a loopback client reads it."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    return response.content.decode()


def value(text: str, name: str, **labels) -> float | None:
    """The value of the sample ``name`` whose labels include ``labels``; None when there is none."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == str(v) for k, v in labels.items()):
                return sample.value
    return None
