"""ANLI verifier labels come in as validations on the examples of an ANLI dev file."""

import csv
from itertools import islice

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Example
from validation.models import Validation
from validation.round_statistics import round_agreement

VERIFIER_LABELS = "/work/shared/data/anli/verifier_labels_R1-3.jsonl"
R1_DEV = "/work/shared/data/anli/ANLI_analysis_r1_dev.csv"


def test_it_imports_verifier_labels_for_the_dev_examples(nli_task):
    summary = call_command("import_votes", "nli", 1, VERIFIER_LABELS, "--format", "anli", "--examples", R1_DEV, "--limit", "80")

    with open(R1_DEV, encoding="utf-8", newline="") as fh:
        rows = list(islice(csv.DictReader(fh), 80))
    assert Example.objects.count() == 80
    assert "80 examples created" in summary and "votes for examples not in the examples file" in summary
    example = Example.objects.get(context__uid=rows[0]["uid"])
    assert example.target == {"label": {"e": "entailment", "n": "neutral", "c": "contradiction"}[rows[0]["gold_label"]]}
    assert example.model_wrong is True  # ANLI dev holds only examples that fooled the model
    votes = Validation.objects.filter(example=example)
    assert 2 <= votes.count() <= 3
    assert {v.metadata["voted_label"] for v in votes} <= {"entailment", "neutral", "contradiction"}
    agreement = round_agreement(nli_task.current_round(), field="voted_label")
    assert agreement.n_items == 80 and agreement.fleiss_kappa is not None


def test_it_needs_the_examples_file(nli_task):
    with pytest.raises(CommandError, match="--examples"):
        call_command("import_votes", "nli", 1, VERIFIER_LABELS, "--format", "anli")
