"""``selectors.validated_examples``: which examples count as validated, and their final label
(owner correction > validator consensus > annotator's label); every consumer agrees with it."""

import json

from django.urls import reverse

from validation import selectors
from validation.round_close import close_round
from validation.services import record_validation
from validation.tests.conftest import make_example, leased


def _by_id(found):
    return {v.example.pk: v for v in found}


def test_final_label_precedence_owner_correction_then_consensus_then_annotator(sentiment_task, annotator, owner, validators):
    by_consensus = make_example(sentiment_task, annotator, label="positive")
    for person in validators:
        record_validation(example=leased(by_consensus, person), validator=person, label="correct")
    corrected = make_example(sentiment_task, annotator, label="positive")
    for person in validators:
        record_validation(example=leased(corrected, person), validator=person, label="correct")
    record_validation(example=corrected, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "neutral"})
    owner_accepted = make_example(sentiment_task, annotator, label="negative")
    record_validation(example=owner_accepted, validator=owner, label="correct", mode="owner")

    found = _by_id(selectors.validated_examples(task=sentiment_task))

    assert found[corrected.pk].target == {"label": "neutral"} and found[corrected.pk].label_source == "owner_correction"
    assert found[by_consensus.pk].target == {"label": "positive"} and found[by_consensus.pk].label_source == "annotator"
    assert found[owner_accepted.pk].target == {"label": "negative"} and found[owner_accepted.pk].label_source == "annotator"


def test_the_latest_owner_decision_decides_the_correction(sentiment_task, annotator, owner, admin_user):
    example = make_example(sentiment_task, annotator, label="positive")
    record_validation(example=example, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "neutral"})
    record_validation(example=example, validator=admin_user, label="correct", mode="owner", metadata={"corrected_label": "negative"})

    assert selectors.validated_examples(task=sentiment_task)[0].target == {"label": "negative"}


def test_pending_rejected_and_retracted_examples_are_not_validated(sentiment_task, annotator, owner, validators):
    make_example(sentiment_task, annotator)
    rejected = make_example(sentiment_task, annotator)
    record_validation(example=rejected, validator=owner, label="incorrect", mode="owner", metadata={"corrected_label": "neutral"})
    retracted = make_example(sentiment_task, annotator)
    record_validation(example=retracted, validator=owner, label="correct", mode="owner")
    retracted.retracted = True
    retracted.save(update_fields=["retracted"])
    kept = make_example(sentiment_task, annotator)
    record_validation(example=kept, validator=owner, label="correct", mode="owner")

    assert [v.example.pk for v in selectors.validated_examples(task=sentiment_task)] == [kept.pk]
    assert list(selectors.validated_queryset(round=sentiment_task.current_round())) == [kept]


def test_round_close_retraining_and_export_take_the_same_final_label(client, sentiment_task, annotator, owner):
    example = make_example(sentiment_task, annotator, label="positive")
    record_validation(example=example, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "neutral"})

    assert selectors.retraining_rows(sentiment_task) == [
        {"id": example.pk, "round": 1, "input": example.input, "target": {"label": "neutral"}}
    ]
    round1 = sentiment_task.current_round()
    client.force_login(owner)
    exported = client.get(reverse("validation:export_round", args=[sentiment_task.code, 1]))
    rows = [json.loads(line) for line in b"".join(exported.streaming_content).decode().splitlines()]
    assert [(r["target"], r["final_target"]) for r in rows] == [({"label": "positive"}, {"label": "neutral"})]

    for _ in range(19):  # closing needs examples in every split: 19 more, validated with their own label
        other = make_example(sentiment_task, annotator, label="positive")
        record_validation(example=other, validator=owner, label="correct", mode="owner")
    datasets = close_round(round=round1, acting_user=owner, ratios={"train": 0.4, "dev": 0.3, "test": 0.3})
    targets = [item.target["label"] for dataset in datasets for item in dataset.items.all()]
    assert sorted(targets) == ["neutral"] + ["positive"] * 19
    rows = {row["id"]: row["target"] for row in selectors.retraining_rows(sentiment_task)}
    example.refresh_from_db()
    assert rows.get(example.pk, {"label": "neutral"}) == {"label": "neutral"} and (example.pk in rows) == (example.split == "train")
