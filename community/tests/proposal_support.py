"""A task definition file as a proposer uploads it, and the form values that go with it."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile

CLAIMS_CONFIG = {
    "labels": ["supports", "refutes"],
    "context_fields": [{"name": "claim", "label": "Claim"}],
    "input_fields": [{"name": "text", "label": "Evidence", "max_length": 500, "required": True}],
    "model_inputs": ["claim", "text"],
    "model_wrong": {"rule": "label_differs"},
    "perf_metric": "accuracy",
    "validations_needed": 1,
}


def definition_file(config=None, **extra) -> SimpleUploadedFile:
    """A definition file (pretty-printed JSON, one key a line, as people write them)."""
    body = {"config": config if config is not None else CLAIMS_CONFIG, **extra}
    return SimpleUploadedFile("claims.json", json.dumps(body, indent=2).encode(), content_type="application/json")


def proposal_fields(**overrides) -> dict:
    """The form's values for a claim-verification task."""
    fields = {"code": "climate-claims", "name": "Climate claims", "kind": "classification", "labels": [],
              "instructions": "Write evidence that **supports** or refutes the claim.", "license": "CC-BY-4.0"}
    return {**fields, **overrides}
