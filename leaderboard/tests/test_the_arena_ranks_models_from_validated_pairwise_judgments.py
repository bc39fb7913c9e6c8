"""The arena page and API rank the models in the loop from side-by-side judgments that validators
confirmed (overturned ones are left out), with intervals, the win-rate matrix and the generative
vMER per model and failure category."""

import django_rq
from django.urls import reverse
from rq import SimpleWorker

from tests.generative_support import compare
from validation.queue import next_example_for
from validation.services import record_validation


def _validate_all(validator, round, verdicts):
    for verdict in verdicts:
        example = next_example_for(validator=validator, round=round)
        record_validation(example=example, validator=validator, label=verdict)


def test_validated_comparisons_rank_the_models(client, annotator, validator, chat_task, endpoint_server, django_capture_on_commit_callbacks):
    alpha, beta = chat_task.loop
    examples = []
    for i in range(6):
        example = compare(user=annotator, task=chat_task, prompt=f"tell me about the museum {i}", preference="a",
                          failing=["b"] if i == 0 else [], category="hate" if i == 0 else "",
                          explanation="B insults people." if i == 0 else "")
        examples.append(example)
    # A is whichever model the draw put first: the winner of each battle is recorded by id.
    assert {tuple(e.model_output["order"]) for e in examples} <= {(alpha.pk, beta.pk), (beta.pk, alpha.pk)}
    round = chat_task.current_round()
    _validate_all(validator, round, ["correct"] * 5 + ["incorrect"])  # the last judgment is overturned
    with django_capture_on_commit_callbacks(execute=True):
        assert client.get(reverse("api-arena", args=[chat_task.code])).status_code == 202  # the first read queues the build
    with django_capture_on_commit_callbacks(execute=True):
        django_rq.get_worker("default", worker_class=SimpleWorker).work(burst=True)
    response = client.get(reverse("api-arena", args=[chat_task.code]))
    assert response.status_code == 200
    data = response.json()
    assert data["battles"] == 5
    ratings = {r["model"]["name"]: r for r in data["ratings"]}
    assert set(ratings) == {"alpha", "beta"}
    for row in ratings.values():
        low, high = row["interval"]
        assert low <= row["rating"] <= high and row["battles"] == 5
    for e in examples:
        e.refresh_from_db()
    winners = [e.model_output["order"][0] for e in examples if e.validation_state == "verified_correct"]
    wins = {name: sum(1 for w in winners if w == m.pk) for name, m in (("alpha", alpha), ("beta", beta))}
    assert {name: ratings[name]["wins"] for name in ratings} == wins
    failing_model = examples[0].model_output["order"][1]
    rates = {f["model"]["id"]: f for f in data["failure_rates"]}
    assert rates[failing_model]["validated_failures"] == 1
    assert rates[failing_model]["by_category"]["Hate and harassment"] == 1 / rates[failing_model]["judged"]
    page = client.get(reverse("leaderboard:arena", args=[chat_task.code]))
    assert page.status_code == 200
    assert page.content.count(b"data-arena-model=") == 2 and b"data-interval" in page.content
