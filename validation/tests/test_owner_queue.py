"""Owners see flagged and disputed examples and decide on them."""

from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def _setup(task, author):
    people = [make_user(f"rater{i}", "validator") for i in range(3)]
    calm = make_example(task, author, text="calm one")
    disputed = make_example(task, author, text="disputed one")
    flagged = make_example(task, author, text="flagged one")
    record_validation(example=leased(calm, people[0]), validator=people[0], label="correct")
    record_validation(example=leased(disputed, people[0]), validator=people[0], label="correct")
    record_validation(example=leased(disputed, people[1]), validator=people[1], label="incorrect")
    for p in people[:2]:
        record_validation(example=leased(flagged, p), validator=p, label="flagged", metadata={"flag_reason": "offensive"})
    return calm, disputed, flagged


def test_it_filters_by_flags_and_disagreement(client, sentiment_task, annotator, owner):
    _setup(sentiment_task, annotator)
    client.force_login(owner)

    flagged_html = client.get("/tasks/sentiment/rounds/1/owner/?min_flags=2").content.decode()
    disputed_html = client.get("/tasks/sentiment/rounds/1/owner/?disagreement=on").content.decode()

    assert "flagged one" in flagged_html and "disputed one" not in flagged_html
    assert "disputed one" in disputed_html and "calm one" not in disputed_html and "flagged one" not in disputed_html


def test_an_owner_decision_settles_the_example(client, sentiment_task, annotator, owner):
    _, disputed, _ = _setup(sentiment_task, annotator)
    client.force_login(owner)

    response = client.post(f"/tasks/sentiment/rounds/1/owner/{disputed.pk}/",
                           {"label": "incorrect", "corrected_label": "neutral", "expected_state": "pending"},
                           HTTP_HX_REQUEST="true")

    assert response.status_code == 200 and "Verified incorrect" in response.content.decode()
    disputed.refresh_from_db()
    assert disputed.validation_state == "verified_incorrect"


def test_validators_cannot_open_it(client, sentiment_task, validator):
    client.force_login(validator)

    assert client.get("/tasks/sentiment/rounds/1/owner/").status_code == 403
