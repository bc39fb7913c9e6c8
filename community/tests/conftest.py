"""Notifications tests: each test's own media root and a clean rate-limit cache; the API tests' datasets."""

import pytest
from django.core.cache import cache

from tests.api.conftest import sentiment_datasets  # noqa: F401  (a fixture)


@pytest.fixture(autouse=True)
def _private_media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    cache.clear()
    yield
    cache.clear()
