"""Writing an example on the create page costs a fixed, small number of database statements: the
page's submit request (session, permission, qualification, model in the loop, the one
transaction that stores the example and its tallies, the counts shown after) stays within 11
(14 on SQLite, which updates the four tallies one by one),
however many examples the author and the round already hold. The submit path is the platform's
hottest; each statement costs it 0.1 to 0.3 ms of round trip and Python (benchmarks/annotation.py)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.tests.helpers import HTMX, token_of

BUDGET = 11 if connection.vendor == "postgresql" else 14


def _submit(client, task, token, n):
    return client.post(f"/tasks/{task.code}/write/submit", {"token": token, "text": f"example number {n}", "label": "positive"}, **HTMX)


def test_a_submission_runs_at_most_eleven_statements_on_postgresql(client, annotator, sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 100}
    sentiment_task.save()
    client.force_login(annotator)
    token = token_of(client.get(f"/tasks/{sentiment_task.code}/write/"))
    for n in range(3):
        assert _submit(client, sentiment_task, token, n).status_code == 200

    with CaptureQueriesContext(connection) as statements:
        response = _submit(client, sentiment_task, token, 3)

    assert response.status_code == 200
    # The test's own transaction turns BEGIN and COMMIT into savepoints, which are not counted.
    sql = [q["sql"] for q in statements if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    assert len(sql) <= BUDGET, "\n".join(s[:120] for s in sql)


def test_a_submission_with_its_key_adds_only_the_replay_check(client, annotator, sentiment_task, sentiment_context):
    """The page's form sends a one-time submission key: it is looked up once, before the model
    runs; a concurrent repeat is caught by the key's unique constraint, not by another query."""
    client.force_login(annotator)
    token = token_of(client.get(f"/tasks/{sentiment_task.code}/write/"))
    assert _submit(client, sentiment_task, token, 0).status_code == 200  # the round's tally rows exist from here on
    data = {"token": token, "text": "keyed example", "label": "positive", "submission_key": "9a8b7c6d5e4f4a3b2c1d0e9f8a7b6c5d"}
    with CaptureQueriesContext(connection) as statements:
        response = client.post(f"/tasks/{sentiment_task.code}/write/submit", data, **HTMX)

    assert response.status_code == 200
    sql = [q["sql"] for q in statements if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    assert len(sql) <= BUDGET + 1, "\n".join(s[:120] for s in sql)
