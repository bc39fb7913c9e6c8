"""Property-based run of schemathesis against the OpenAPI schema on a live server.

Every operation gets a bounded number of generated requests (``EXAMPLES`` valid ones with
the path pointing at real objects, plus ``NEGATIVE_EXAMPLES`` invalid ones), sent with a
task owner's token. Each answer must: not be a 5xx, use a documented status code and
content type, and match the documented response schema and headers.
"""

import os
from collections import Counter

import hypothesis
import hypothesis.errors
import pytest
import schemathesis
from django.conf import settings
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.models import Example

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "20"))
NEGATIVE_EXAMPLES = int(os.environ.get("SCHEMATHESIS_NEGATIVE_EXAMPLES", "8"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance, response_headers_conformance]
HIGH_RATES = {
    **settings.REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {scope: "100000/day" for scope in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]},
}


@pytest.mark.slow
@override_settings(REST_FRAMEWORK=HIGH_RATES)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(live_server, owner, annotator, sentiment_datasets, sentiment_model):
    schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    round1 = sentiment_model.task.current_round()
    example = Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator, model=sentiment_model, input={"text": "Oh great."},
        target={"label": "negative"}, model_output={"label": "positive", "probs": {}}, model_wrong=True,
    )
    ids = {"/api/v1/datasets/": sentiment_datasets["scoring"].pk, "/api/v1/models/": sentiment_model.pk, "/api/v1/examples/": example.pk}
    statuses, failures, operations = Counter(), [], 0

    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        fixed = {"task_code": "sentiment", "round_number": 1}
        fixed.update({"id": pk for prefix, pk in ids.items() if operation.path.startswith(prefix)})
        fixed = {k: v for k, v in fixed.items() if "{" + k + "}" in operation.path}

        def run(case):
            token, _ = Token.objects.get_or_create(user=owner)
            response = case.call(base_url=live_server.url, headers={"Authorization": f"Token {token.key}"})
            statuses[response.status_code] += 1
            try:
                case.validate_response(response, checks=CHECKS)
            except FailureGroup as exc:  # collect every failing operation, then report them together
                failures.append(f"{operation.method.upper()} {operation.path}: {exc}")

        for mode, count in ((GenerationMode.POSITIVE, EXAMPLES), (GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES)):
            strategy = st.one_of(operation.as_strategy(generation_mode=mode, path_parameters=fixed), operation.as_strategy(generation_mode=mode)) if fixed else operation.as_strategy(generation_mode=mode)
            test = hypothesis.settings(
                max_examples=count, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate],
            )(given(case=strategy)(run))
            try:
                test()
            except hypothesis.errors.Unsatisfiable:
                assert mode == GenerationMode.NEGATIVE  # nothing invalid to send (no parameters, no body)

    print(f"\nschemathesis: {operations} operations, {sum(statuses.values())} requests, statuses {dict(sorted(statuses.items()))}, {len(failures)} failures")
    assert not [code for code in statuses if code >= 500]
    assert failures == [], "\n\n".join(failures[:5])
