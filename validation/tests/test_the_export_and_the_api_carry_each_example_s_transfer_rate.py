"""A validated example's transfer rate travels with it: a ``transfer`` column in the round export's JSON
Lines and a ``transfer`` field in the example API; null until it is measured or when not validated."""

import json

from annotation.models import TransferRate
from validation.services import record_validation
from validation.tests.conftest import make_example


def test_the_export_line_and_the_api_answer_carry_fooled_tried_and_rate(sentiment_task, annotator, owner, client):
    rated, unrated, pending = (make_example(sentiment_task, annotator, text=t) for t in ("rated", "unrated", "pending"))
    for example in (rated, unrated):
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    TransferRate.objects.create(example=rated, fooled=1, tried=3)
    TransferRate.objects.create(example=pending, fooled=1, tried=1)  # stale: shown only for validated examples
    client.force_login(owner)
    round = sentiment_task.current_round()

    lines = [json.loads(line) for line in client.get(f"/tasks/sentiment/rounds/{round.number}/export.jsonl").getvalue().decode().splitlines()]
    by_id = {row["id"]: row for row in lines}

    assert by_id[rated.pk]["transfer"] == {"rate": 1 / 3, "fooled": 1, "tried": 3}
    assert by_id[unrated.pk]["transfer"] is None and by_id[pending.pk]["transfer"] is None
    client.force_login(annotator)
    api = {}
    for example in (rated, unrated, pending):
        answer = client.get(f"/api/v1/examples/{example.pk}")
        assert answer.status_code == 200
        api[example.pk] = answer.json()["transfer"]
    assert api == {rated.pk: {"rate": 1 / 3, "fooled": 1, "tried": 3}, unrated.pk: None, pending.pk: None}
