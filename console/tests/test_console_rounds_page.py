"""The console's rounds page: open the next round with several models in the loop and a rule,
see each round's counts, and close a round after a preview of the datasets it writes."""

from tasks.models import MLModel, Round
from validation.tests.conftest import make_example
from validation import round_close


def _model(task, name):
    return MLModel.objects.create(task=task, name=name, path=f"/models/{name}")


def test_an_owner_closes_round_1_then_opens_round_2_with_two_models(client, owner, annotator, sentiment_task):
    a, b = _model(sentiment_task, "model-a"), _model(sentiment_task, "model-b")
    for _ in range(20):  # enough that no split is empty (closing with an empty dev or test split is refused)
        make_example(sentiment_task, annotator, validation_state="verified_correct")
    client.force_login(owner)

    preview = client.get("/tasks/sentiment/console/rounds/1/close").content.decode()
    assert 'data-validated>20<' in preview and "sentiment-r1-train" in preview
    unconfirmed = client.post("/tasks/sentiment/console/rounds/1/close", {"train": 0.4, "dev": 0.3, "test": 0.3, "seed": 13})
    assert unconfirmed.status_code == 200 and 'data-split="dev"><td>dev</td><td>sentiment-r1-dev</td><td>6<' in unconfirmed.content.decode()
    assert Round.objects.get(task=sentiment_task, number=1).status == "open"  # the preview follows the ratios; nothing closed yet
    response = client.post("/tasks/sentiment/console/rounds/1/close", {"train": 0.4, "dev": 0.3, "test": 0.3, "seed": 13, "confirm": "on"})
    assert response.status_code == 302
    assert Round.objects.get(task=sentiment_task, number=1).status == "closed"

    response = client.post("/tasks/sentiment/console/rounds/open", {"target_models": [a.pk, b.pk], "loop_rule": "least_fooled"})

    assert response.status_code == 302
    round2 = Round.objects.get(task=sentiment_task, number=2)
    assert round2.status == "open" and round2.loop_rule == "least_fooled"
    assert set(round2.target_models.values_list("name", flat=True)) == {"model-a", "model-b"}
    page = client.get(response["Location"]).content.decode()
    assert "Round 2 is open with 2 model(s) in the loop." in page and "Least fooled so far" in page


def test_opening_while_a_round_is_open_is_refused_on_the_page(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/rounds/open", {"loop_rule": "round_robin"})
    assert response.status_code == 400 and "round 1 of sentiment is still open" in response.content.decode()
    assert sentiment_task.rounds.count() == 1


def test_bad_split_ratios_keep_the_form(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/rounds/1/close", {"train": 0.9, "dev": 0.5, "test": 0.1, "seed": 1})
    assert response.status_code == 400 and "sum to 1" in response.content.decode()
    assert sentiment_task.rounds.get(number=1).status == "open"


def test_the_close_preview_is_the_shared_one_with_the_models_rescored_and_what_refuses_it(client, owner, annotator, sentiment_task):
    published = _model(sentiment_task, "published-model")
    published.published = True
    published.save(update_fields=["published"])
    make_example(sentiment_task, annotator, validation_state="verified_correct")  # too few for a dev and a test split
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/rounds/1/close").content.decode()
    expected = round_close.preview_round_close(sentiment_task.current_round())

    assert "published-model" in page.split("data-rescored>")[1].split("</p>")[0]
    assert expected.problems and all(problem in page for problem in expected.problems)
