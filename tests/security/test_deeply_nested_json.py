"""Finding 8: deeply nested JSON is a 400 (API bodies) or a clear refusal (a model's config.json).

Old code: 5,000 nested arrays to the anonymous token endpoint, or in a submitted model's
``config.json``, raised ``RecursionError``: a 500.
"""

import shutil

import pytest
from rest_framework.test import APIClient

from dynabench.errors import RuleError
from tasks.loop.model_checks import check_model_directory

LIMIT = 64  # dynabench.jsonbounds.MAX_JSON_DEPTH


def _nested(depth: int) -> str:
    return '{"username": ' + "[" * depth + "]" * depth + "}"


def test_the_limit_is_the_documented_one():
    from dynabench.jsonbounds import MAX_JSON_DEPTH

    assert MAX_JSON_DEPTH == LIMIT


@pytest.mark.parametrize("depth", [5000, LIMIT + 1])
def test_the_anonymous_token_endpoint_answers_400(db, depth):
    response = APIClient().post("/api/v1/auth/token", _nested(depth), content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"
    assert f"more than {LIMIT} levels deep" in response.json()["detail"]


def test_an_ordinary_body_still_parses(db):
    response = APIClient().post("/api/v1/auth/token", {"username": "nobody", "password": "x"}, format="json")

    assert response.status_code == 401


def test_a_deeply_nested_model_config_is_refused_by_name(tmp_path, sentiment_task, tiny_classifier_dir):
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    (model / "config.json").write_text(_nested(5000))

    with pytest.raises(RuleError) as refused:
        check_model_directory(model, task=sentiment_task)

    assert refused.value.code == "model_bad_config"
    assert "config.json is refused" in refused.value.message and "levels deep" in refused.value.message
