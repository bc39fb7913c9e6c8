"""Issue 19 finding 4, after the lease rule: a validator could still skip, again and again, until
the queue handed them a chosen example (a friend's). Skips are now limited per round and day
(``VALIDATION_SKIPS_PER_DAY``, counted in the cache so a new session does not reset them); past
the limit the skip answers 429, says what to do, and the example stays with the validator."""

from validation.tests.conftest import make_example

HTMX = {"HTTP_HX_REQUEST": "true"}


def _shown(response) -> int:
    return int(response.content.decode().split('data-example-id="')[1].split('"')[0])


def test_the_third_skip_of_the_day_is_refused_and_the_example_stays(client, settings, sentiment_task, annotator, validator):
    settings.VALIDATION_SKIPS_PER_DAY = 2
    examples = [make_example(sentiment_task, annotator, model_wrong=True) for _ in range(4)]
    client.force_login(validator)
    shown = _shown(client.get("/tasks/sentiment/validate/"))

    for _ in range(2):
        shown = _shown(client.post(f"/tasks/sentiment/validate/{shown}/skip/", **HTMX))
    client.logout()
    client.force_login(validator)  # a new session keeps the day's count
    shown = _shown(client.get("/tasks/sentiment/validate/"))
    refused = client.post(f"/tasks/sentiment/validate/{shown}/skip/", **HTMX)

    assert refused.status_code == 429
    assert "You skipped 2 examples in this round today" in refused.content.decode()
    assert _shown(refused) == shown
    assert {e.pk for e in examples} >= {shown}
