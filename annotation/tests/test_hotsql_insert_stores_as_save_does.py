"""``hotsql.insert`` (the submit path's insert of an ``Example``) stores what ``save()`` stores."""

import pytest
from django.db import IntegrityError, transaction
from django.db.models.signals import post_save, pre_save

from annotation.models import Example, RoundTally
from dynabench import hotsql


def stored(pk) -> dict:
    return {k: v for k, v in Example.objects.filter(pk=pk).values().get().items() if k not in {"id", "created_at"}}


def example_of(context, author, **changes):
    fields = {"input": {"text": "Zoë liked it"}, "target": {"label": "positive"}, "model_output": {"label": "negative", "probs": [0.2, 0.8]},
              "model_wrong": True, "metadata": {"example_explanation": "sarcasm"}, "time_spent": 12.5}
    return Example(round=context.round, context=context, author=author, **{**fields, **changes})


def test_the_row_signals_and_returned_fields_match_save(annotator, sentiment_context):
    sent = []

    def note(sender, instance, **kwargs):
        sent.append((kwargs.get("created"), instance.pk))

    pre_save.connect(note, sender=Example)
    post_save.connect(note, sender=Example)
    try:
        inserted = example_of(sentiment_context, annotator, submission_key="k1")
        hotsql.insert(inserted)
    finally:
        pre_save.disconnect(note, sender=Example)
        post_save.disconnect(note, sender=Example)
    saved = example_of(sentiment_context, annotator, submission_key="k2")
    saved.save()

    assert sent == [(None, None), (True, inserted.pk)]
    assert inserted.pk and not inserted._state.adding
    assert inserted.created_at is not None and inserted.disagreeing == 0  # auto_now_add; the generated column
    assert {**stored(inserted.pk), "submission_key": ""} == {**stored(saved.pk), "submission_key": ""}
    assert RoundTally.objects.get(round=sentiment_context.round).collected == 2  # counted by the post_save receiver


def test_a_unique_violation_raises_integrity_error(annotator, sentiment_context):
    hotsql.insert(example_of(sentiment_context, annotator, submission_key="same"))
    with pytest.raises(IntegrityError), transaction.atomic():
        hotsql.insert(example_of(sentiment_context, annotator, submission_key="same"))
    assert Example.objects.filter(submission_key="same").count() == 1
