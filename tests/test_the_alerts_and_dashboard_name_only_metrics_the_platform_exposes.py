"""Every metric that monitoring/alerts.yml and monitoring/dashboard.json query is one ``/metrics``
declares, so a renamed metric cannot leave a rule that never fires or a panel that stays empty."""

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from dynabench.tests.metrics_support import scrape

MONITORING = Path(__file__).resolve().parent.parent / "monitoring"
_NAME = re.compile(r"\bdynabench_[a-z0-9_]+")


def _declared(client) -> set[str]:
    names = set()
    for family in text_string_to_metric_families(scrape(client)):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "counter":
            names.add(family.name + "_total")
        if family.type == "histogram":
            names.update(family.name + suffix for suffix in ("_bucket", "_count", "_sum"))
    return names


def test_the_rules_and_the_dashboard_query_declared_metrics(client, db):
    declared = _declared(client)

    for path in ("alerts.yml", "alerts.test.yml", "dashboard.json"):
        queried = set(_NAME.findall((MONITORING / path).read_text()))
        assert queried, path
        assert queried <= declared, f"{path} names metrics /metrics does not declare: {sorted(queried - declared)}"
