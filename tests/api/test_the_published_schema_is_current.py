"""The OpenAPI schema the docs publish (``docs/researchers/openapi.yaml``) is the one the code
generates: a change to the API without ``manage.py spectacular --file docs/researchers/openapi.yaml``
fails here, so the documented API never drifts from the real one."""

from pathlib import Path

from django.core.management import call_command

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "researchers" / "openapi.yaml"


def test_the_published_schema_is_the_generated_one(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(generated))
    assert generated.read_text() == PUBLISHED.read_text(), (
        "docs/researchers/openapi.yaml is out of date: run .venv/bin/python manage.py spectacular --file docs/researchers/openapi.yaml")
