"""The OpenAPI schema the docs publish (``docs/researchers/openapi.yaml``) is the one the code
generates: a change to the API without ``manage.py spectacular --file docs/researchers/openapi.yaml``
fails here, so the documented API never drifts from the real one. The published file is generated on
the default database (SQLite); the bounds of integer fields come from the database in use
(PostgreSQL's are 64-bit), so lines of integer bounds and formats are left out of the comparison."""

import re
from pathlib import Path

from django.core.management import call_command

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "researchers" / "openapi.yaml"
DATABASE_BOUNDS = re.compile(r"^\s*(maximum|minimum|format): (-?\d+|int32|int64)\s*$")


def _without_database_bounds(text: str) -> list[str]:
    return [line for line in text.splitlines() if not DATABASE_BOUNDS.match(line)]


def test_the_published_schema_is_the_generated_one(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(generated))
    assert _without_database_bounds(generated.read_text()) == _without_database_bounds(PUBLISHED.read_text()), (
        "docs/researchers/openapi.yaml is out of date: run .venv/bin/python manage.py spectacular --file docs/researchers/openapi.yaml")
