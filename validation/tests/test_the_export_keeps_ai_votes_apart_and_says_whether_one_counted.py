"""A round's export carries AI validators' votes as a column group of their own (``ai_votes``: the model,
the label, its reason, whether it was readable, how it counted, the A/B arm, the settings checksum), never
among the people's ``validations``, and says per example whether an AI vote counted toward its consensus;
the Croissant description names the column."""

from annotation.models import Example
from tasks.models import MLModel
from validation.croissant import FIELDS
from validation.export import export_rows
from validation.judge_models import AIVote
from validation.tests.conftest import make_example


def test_each_line_has_its_ai_votes_apart(sentiment_task, annotator):
    counted, uncounted, none = (make_example(sentiment_task, annotator) for _ in range(3))
    judge = MLModel.objects.create(task=sentiment_task, name="judge-x", kind=MLModel.Kind.ENDPOINT)
    AIVote.objects.create(example=counted, round=counted.round, model=judge, label="correct", reason="fits",
                          confidence=0.95, counted_as="triage", arm="policy", settings_checksum="c" * 64)
    AIVote.objects.create(example=uncounted, round=uncounted.round, model=judge, parsed=False, reason="no JSON", raw="hm")

    rows = {r["id"]: r for r in export_rows(Example.objects.filter(pk__in=[counted.pk, uncounted.pk, none.pk]))}

    assert [rows[e.pk]["ai_vote_counted"] for e in (counted, uncounted, none)] == [True, False, False]
    vote = rows[counted.pk]["ai_votes"][0]
    assert {k: vote[k] for k in ("model", "label", "reason", "confidence", "counted_as", "arm", "parsed")} == {
        "model": "judge-x", "label": "correct", "reason": "fits", "confidence": 0.95, "counted_as": "triage",
        "arm": "policy", "parsed": True}
    assert rows[uncounted.pk]["ai_votes"][0]["parsed"] is False and rows[none.pk]["ai_votes"] == []
    assert all(r["validations"] == [] for r in rows.values())
    assert "ai_vote_counted" in [name for name, _, _ in FIELDS]
