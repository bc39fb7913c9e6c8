"""A user's page: vMER per round as an annotator, agreement with outcomes as a validator."""

from validation.services import record_validation
from validation.tests.conftest import make_example, leased


def test_it_shows_the_users_vmer_and_validation_record(client, sentiment_task, annotator, validators, owner):
    verified = make_example(sentiment_task, annotator)
    make_example(sentiment_task, annotator)
    for v in validators:
        record_validation(example=leased(verified, v), validator=v, label="correct")
    client.force_login(annotator)

    html = client.get("/users/annie/").content.decode()

    assert '<strong id="vmer">50.0%</strong>' in html
    client.force_login(validators[0])
    assert "1 validation; 1 on settled examples, of which 1 agreed" in client.get("/users/val1/").content.decode()


def test_others_cannot_see_it(client, annotator, validator):
    client.force_login(validator)

    assert client.get("/users/annie/").status_code == 403
