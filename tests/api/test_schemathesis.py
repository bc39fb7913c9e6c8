"""Property-based run of schemathesis against the OpenAPI schema on a live server.

Every operation gets a bounded number of generated requests (``EXAMPLES`` valid ones with
the path pointing at real objects, plus ``NEGATIVE_EXAMPLES`` invalid ones where it has an
input that can be made invalid), sent with a task owner's token. Each answer must: not be a
5xx, use a documented status code and content type, and match the documented response
schema and headers.
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


def _nothing_to_make_invalid(operation: dict) -> bool:
    """Whether an OpenAPI operation's only inputs are path parameters of plain ``string`` type (no
    body, no query, header or cookie parameter, no pattern, format, length or enum): every path
    segment is a string, so schemathesis has nothing invalid to send, and its negative mode rejects
    every draw until hypothesis gives up with ``Unsatisfiable`` (GET /api/v1/me, DELETE
    /api/v1/tasks/{task_code}/roles, ...)."""
    if "requestBody" in operation:
        return False
    return all(p["in"] == "path" and set(p.get("schema", {})) <= {"type", "description"} and p["schema"].get("type") == "string"
               for p in operation.get("parameters", []))


@pytest.mark.slow
@override_settings(REST_FRAMEWORK=HIGH_RATES, MODEL_UPLOAD_ATTEMPTS_PER_HOUR=0)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(live_server, owner, annotator, sentiment_datasets, sentiment_model):
    raw = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(raw)
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
            if mode == GenerationMode.NEGATIVE and _nothing_to_make_invalid(raw["paths"][operation.path][operation.method.lower()]):
                continue  # hypothesis would only prove it (Unsatisfiable, below), at ~1 s of rejected draws an operation
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


# --- out-of-bounds input (issue 28): every operation, one valid request made bad in each way ---------

HUGE_INT = 10**4000  # 4,001 digits: past the bounded reader's 19 (and near Python's int-string limit)


def _nested(depth: int):
    value = "deep"
    for _ in range(depth):
        value = [value]
    return value


def _mutate(value, edge: str):
    """``value`` (a body, query or path parameters) with every string, integer or container made
    out of bounds the ``edge`` way; None when nothing in it could be."""
    if isinstance(value, dict):
        out = {k: _mutate(v, edge) for k, v in value.items()}
        return out if any(o is not None for o in out.values()) and out != value else None
    if isinstance(value, list):
        if edge == "deep":
            return [_nested(70)]
        out = [_mutate(v, edge) for v in value]
        return out if any(o is not None for o in out) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return {"huge_int": HUGE_INT, "int_2_100": 2**100}.get(edge)
    if isinstance(value, str):
        return {"nul": f"a\x00{value}", "surrogate": f"{value}\ud800", "int_2_100": str(2**100)}.get(edge)
    return None


def _with_fallback(mutated, original):
    if isinstance(mutated, dict) and isinstance(original, dict):
        return {k: (mutated.get(k) if mutated.get(k) is not None else original[k]) for k in original}
    return mutated if mutated is not None else original


EDGES = ("nul", "surrogate", "huge_int", "int_2_100", "deep")


@pytest.mark.slow
@override_settings(REST_FRAMEWORK=HIGH_RATES, MODEL_UPLOAD_ATTEMPTS_PER_HOUR=0)
def test_out_of_bounds_input_on_every_operation_is_never_a_server_error(live_server, owner, annotator, sentiment_datasets, sentiment_model):
    """Each operation gets one valid generated request, then that request with every string given a
    NUL or a lone surrogate, every integer 2**100 or 4,001 digits (and numeric strings 2**100), every
    list nested 70 deep: in the body, the query and the path. No answer may be a 5xx."""
    schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    ids = {"/api/v1/datasets/": sentiment_datasets["scoring"].pk, "/api/v1/models/": sentiment_model.pk}
    token, _ = Token.objects.get_or_create(user=owner)
    headers = {"Authorization": f"Token {token.key}"}
    server_errors, sent = [], Counter()

    for result in schema.get_all_operations():
        operation = result.ok()
        fixed = {"task_code": "sentiment", "round_number": 1}
        fixed.update({"id": pk for prefix, pk in ids.items() if operation.path.startswith(prefix)})
        fixed = {k: v for k, v in fixed.items() if "{" + k + "}" in operation.path}
        cases = []

        @hypothesis.settings(max_examples=1, deadline=None, database=None, derandomize=True,
                             suppress_health_check=list(HealthCheck), phases=[Phase.generate])
        @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE, path_parameters=fixed or None))
        def one(case):
            cases.append(case)

        one()
        base = cases[0]
        body = base.body if isinstance(base.body, (dict, list)) else None
        for edge in EDGES:
            changed = {
                "body": _mutate(body, edge) if body is not None else None,
                "query": _mutate(dict(base.query or {}), edge) if base.query else None,
                "path_parameters": _mutate(dict(base.path_parameters or {}), edge) if base.path_parameters else None,
            }
            for part, value in changed.items():
                if value is None:
                    continue
                parts = {"body": base.body, "query": base.query, "path_parameters": base.path_parameters}
                parts[part] = _with_fallback(value, parts[part])
                case = operation.Case(method=base.method, media_type=base.media_type, headers=base.headers, **parts)
                try:
                    response = case.call(base_url=live_server.url, headers=headers)
                except (ValueError, UnicodeEncodeError):
                    continue  # not sendable (e.g. a surrogate in a URL or a form field): no server sees it
                sent[edge] += 1
                if response.status_code >= 500:
                    server_errors.append(f"{operation.method.upper()} {operation.path} {part} {edge}: {response.status_code} {response.text[:200]}")

    print(f"\nout-of-bounds input: {sum(sent.values())} requests {dict(sent)}, {len(server_errors)} server errors")
    assert sum(sent.values()) > 0
    assert server_errors == [], "\n".join(server_errors[:10])
