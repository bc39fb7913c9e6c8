"""A definition file that breaks its kind's schema is refused before anything is stored, each problem
on the line of the file where it is; bad JSON names its line; a bad form value names its field."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from community.models import TaskProposal
from community.proposals import submit_proposal
from community.tests.proposal_support import CLAIMS_CONFIG, definition_file, proposal_fields
from dynabench.errors import FieldErrors


def test_schema_problems_are_reported_by_line(researcher):
    config = {**CLAIMS_CONFIG, "perf_metric": "bleu-ish", "input_fields": [{"name": "text", "colour": "red"}]}
    upload = definition_file(config)
    text = upload.read().decode()
    upload.seek(0)

    with pytest.raises(FieldErrors) as refused:
        submit_proposal(proposer=researcher, fields=proposal_fields(), definition_file=upload)

    problems = refused.value.errors["definition"]
    lines = text.splitlines()
    perf = next(p for p in problems if "perf_metric" in p)
    colour = next(p for p in problems if "colour" in p)
    assert '"perf_metric"' in lines[int(perf.split()[1].rstrip(":")) - 1]
    assert '"colour"' in lines[int(colour.split()[1].rstrip(":")) - 1]
    assert not TaskProposal.objects.exists()


def test_bad_json_and_bad_form_values(researcher, sentiment_task):
    broken = SimpleUploadedFile("d.json", b'{\n  "config": {\n    "labels": [1,]\n  }\n}')
    with pytest.raises(FieldErrors) as bad_json:
        submit_proposal(proposer=researcher, fields=proposal_fields(), definition_file=broken)
    with pytest.raises(FieldErrors) as bad_form:
        submit_proposal(proposer=researcher, fields=proposal_fields(code="sentiment", labels=["x\x00"]),
                        definition_file=definition_file())
    with pytest.raises(FieldErrors) as bad_labels:
        submit_proposal(proposer=researcher, fields=proposal_fields(labels=["same", "same"]), definition_file=definition_file())

    assert bad_json.value.errors["definition"][0].startswith("line 3: not valid JSON")
    assert "exists already" in bad_form.value.errors["code"][0] and bad_form.value.errors["labels"]
    assert "labels" in bad_labels.value.errors and json.dumps(bad_labels.value.errors)  # named on the form field
    assert not TaskProposal.objects.exists()
