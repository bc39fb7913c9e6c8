"""Fixtures for the console's tests: the validation tests' people and examples, and the API tests'
private media root and fresh rate limits (the console's pages and API read the same records)."""

from tests.api.conftest import _fresh_rate_limits, _private_media_root, nli_owner  # noqa: F401
from validation.tests.conftest import fast_passwords, fooling_example, qa_example, role_groups, validators  # noqa: F401
