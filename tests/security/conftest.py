"""Fixtures for the security tests: fresh cache counters (rate limits outlive a test's database), a model in the loop."""

import pytest
from django.core.cache import cache

from tests.api.conftest import sentiment_model  # noqa: F401  (a tiny classifier in the loop of round 1)


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()
