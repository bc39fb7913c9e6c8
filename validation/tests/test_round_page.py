"""The round page shows counts, vMER, agreement (as computed by its job) and the annotators."""

import re

from tasks.models import Round
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def test_it_shows_vmer_and_agreement(client, sentiment_task, annotator, owner, settings, django_capture_on_commit_callbacks):
    people = [make_user(f"rater{i}", "validator") for i in range(3)]
    fooled = [make_example(sentiment_task, annotator) for _ in range(3)]
    make_example(sentiment_task, annotator, model_wrong=False)
    for labels, example in zip([("correct",) * 3, ("correct", "incorrect", "correct", ), ("incorrect",) * 3], fooled):
        for person, label in zip(people, labels):
            record_validation(example=leased(example, person), validator=person, label=label)
    client.force_login(owner)
    settings.RQ_QUEUES = {name: {**conf, "ASYNC": False} for name, conf in settings.RQ_QUEUES.items()}

    with django_capture_on_commit_callbacks(execute=True):  # the first view asks the job
        first = client.get("/tasks/sentiment/rounds/1/").content.decode()
    response = client.get("/tasks/sentiment/rounds/1/")

    html = response.content.decode()
    assert "being computed" in first
    assert response.status_code == 200
    assert '<td id="collected">4</td>' in html
    assert '<td id="vmer"><strong>25.0%</strong></td>' in html  # 1 verified fooled of 4 collected
    assert 'data-metric="fleiss_kappa">0.' in html or 'data-metric="fleiss_kappa">-0.' in html
    assert 'id="agreement-as-of">As of ' in html and "being counted" not in html
    assert "annie" in html and "Close this round…" in html


def test_it_says_why_agreement_is_missing(client, sentiment_task):
    html = client.get("/tasks/sentiment/rounds/1/").content.decode()

    assert 'data-metric="fleiss_kappa">—' in html and "needs at least 2 examples" in html
    assert "Close round" not in html


def test_an_owner_closes_the_round_from_it_after_a_preview(client, sentiment_task, annotator, owner):
    for _ in range(2):
        record_validation(example=make_example(sentiment_task, annotator), validator=owner, label="correct", mode="owner")
    client.force_login(owner)
    assert 'id="close-round-link"' in client.get("/tasks/sentiment/rounds/1/").content.decode()
    ratios = {"train": "0", "dev": "0.5", "test": "0.5", "seed": "1"}

    preview = client.post("/tasks/sentiment/rounds/1/close/", ratios)  # no confirmation: a preview only
    assert preview.status_code == 200 and 'data-split="test"><td>test</td><td>sentiment-r1-test</td><td>1<' in preview.content.decode()
    assert Round.objects.get(task=sentiment_task, number=1).status == "open"
    response = client.post("/tasks/sentiment/rounds/1/close/", {**ratios, "confirm": "on"}, follow=True)

    html = response.content.decode()
    assert "is closed. Datasets: sentiment-r1-train (0), sentiment-r1-dev (1), sentiment-r1-test (1)" in html
    assert 'id="close-round-link"' not in html


def test_it_lists_annotators_most_verified_fooled_first(client, nli_task, annotator, owner):
    fooled = make_example(nli_task, annotator)
    for i in range(3):
        rater = make_user(f"rater{i}", "validator")
        record_validation(example=leased(fooled, rater), validator=rater, label="correct")
    make_example(nli_task, annotator)
    make_example(nli_task, owner, model_wrong=False)
    client.force_login(owner)  # names are for owners (tests/security/test_round_page_hides_annotator_names.py)

    html = client.get(f"/tasks/{nli_task.code}/rounds/1/").content.decode()

    rows = dict(re.findall(r'<tr data-annotator="(\w+)">(.*?)</tr>', html, re.S))
    cells = {name: re.findall(r"<td>([^<]*)</td>", row) for name, row in rows.items()}
    assert cells["annie"][:3] == ["2", "2", "1"] and cells["olga"][:3] == ["1", "0", "0"]
    assert html.index('data-annotator="annie"') < html.index('data-annotator="olga"')


def test_it_answers_404_for_a_missing_round(client, nli_task):
    assert client.get(f"/tasks/{nli_task.code}/rounds/9/").status_code == 404
