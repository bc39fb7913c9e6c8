"""DynaSent round 2 dev: 5 crowd votes per sentence come in as validations."""

import json
from itertools import islice

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from annotation.models import Example
from validation.models import Validation
from validation.round_statistics import round_agreement

DYNASENT_R2_DEV = "/work/shared/data/dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl"


def test_it_imports_sentences_workers_and_votes(sentiment_task):
    summary = call_command("import_votes", "sentiment", 1, DYNASENT_R2_DEV, "--format", "dynasent", "--limit", "120")

    with open(DYNASENT_R2_DEV, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in islice(fh, 120)]
    assert "read 120 rows: 120 examples created" in summary
    assert Validation.objects.count() == sum(len(w) for r in rows for w in r["label_distribution"].values()) == 600
    worker = User.objects.get(username=f"dynasent-{rows[0]['label_distribution'][rows[0]['gold_label']][0]}")
    assert worker.is_active is False and not worker.has_usable_password()
    example = Example.objects.get(context__uid=rows[0]["text_id"])
    assert example.input["text"] == rows[0]["sentence"]
    assert example.model_wrong == (rows[0]["model_1_label"] != rows[0]["gold_label"])
    # Gold is the majority of 5 with at least 3 votes, so every imported example is verified correct.
    assert set(Example.objects.values_list("validation_state", flat=True)) == {"verified_correct"}
    votes = Validation.objects.filter(example=example)
    assert sorted(v.metadata["voted_label"] for v in votes) == sorted(
        label for label, workers in rows[0]["label_distribution"].items() for _ in workers
    )


def test_reimporting_adds_nothing(sentiment_task):
    call_command("import_votes", "sentiment", 1, DYNASENT_R2_DEV, "--format", "dynasent", "--limit", "30")
    counts = (Example.objects.count(), Validation.objects.count(), User.objects.count())

    summary = call_command("import_votes", "sentiment", 1, DYNASENT_R2_DEV, "--format", "dynasent", "--limit", "30")

    assert (Example.objects.count(), Validation.objects.count(), User.objects.count()) == counts
    assert "30 matched, 0 validations added" in summary


def test_agreement_over_the_whole_dev_file_matches_the_published_kappa(sentiment_task):
    call_command("import_votes", "sentiment", 2, DYNASENT_R2_DEV, "--format", "dynasent", "--create-round")

    agreement = round_agreement(sentiment_task.rounds.get(number=2), field="voted_label")

    assert agreement.n_items == 720 and agreement.raters_per_item == 5
    assert agreement.fleiss_kappa == pytest.approx(0.681, abs=0.0005)  # data README: Fleiss κ 0.681 (dev)


def test_it_refuses_a_file_of_another_format(sentiment_task):
    with pytest.raises(CommandError, match="no text_id"):
        call_command("import_votes", "sentiment", 1, "/work/shared/data/anli/verifier_labels_R1-3.jsonl", "--format", "dynasent")
    assert Example.objects.count() == 0
