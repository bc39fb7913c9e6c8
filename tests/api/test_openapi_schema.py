"""The OpenAPI 3 schema validates with no warnings and is served at ``/api/schema/``."""

from django.core.management import call_command
from rest_framework.test import APIClient


def test_the_schema_validates_without_warnings(db, tmp_path):
    out = tmp_path / "schema.yaml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))

    assert "openapi: 3" in out.read_text()


def test_it_serves_the_schema_with_every_api_path(db):
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["components"]["securitySchemes"]["tokenAuth"]["type"] == "apiKey"
    assert {"/api/v1/auth/token", "/api/v1/me", "/api/v1/tasks", "/api/v1/datasets/{id}/items"} <= set(schema["paths"])
    assert all(path.startswith("/api/v1/") for path in schema["paths"])


def test_every_operation_documents_its_error_answers(db):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert {"400", "401", "403", "404", "429"} <= set(operation["responses"]), f"{method} {path}"
