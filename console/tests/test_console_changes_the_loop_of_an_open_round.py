"""From the console's rounds page an owner adds models to, and takes them out of, the loop of the
open round (``tasks.services.add_loop_model`` / ``remove_loop_model``); the last model cannot
leave, a closed round's loop cannot change, and the page says what an open round still lacks."""

from tasks.models import MLModel, Round
from tasks.services import set_round_status


def _model(task, name):
    return MLModel.objects.create(task=task, name=name, path=f"/models/{name}")


def test_an_owner_adds_a_model_then_takes_the_first_out(client, owner, sentiment_task):
    round1 = sentiment_task.current_round()
    first, second = _model(sentiment_task, "first"), _model(sentiment_task, "second")
    round1.target_models.set([first])
    client.force_login(owner)

    added = client.post("/tasks/sentiment/console/rounds/1/loop/add", {"model": second.pk})
    assert added.status_code == 302 and set(round1.target_models.values_list("name", flat=True)) == {"first", "second"}
    removed = client.post("/tasks/sentiment/console/rounds/1/loop/remove", {"model": first.pk})
    assert removed.status_code == 302 and list(round1.target_models.values_list("name", flat=True)) == ["second"]
    assert "first left the loop of round 1." in client.get(removed["Location"]).content.decode()


def test_the_last_model_stays_and_the_page_says_why(client, owner, sentiment_task):
    round1 = sentiment_task.current_round()
    only = _model(sentiment_task, "only")
    round1.target_models.set([only])
    client.force_login(owner)

    response = client.post("/tasks/sentiment/console/rounds/1/loop/remove", {"model": only.pk})

    assert response.status_code == 400
    assert "only is the only model in the loop of round 1: add another model before taking it out" in response.content.decode()
    assert list(round1.target_models.all()) == [only]


def test_a_closed_round_keeps_its_loop(client, owner, sentiment_task):
    round1 = sentiment_task.current_round()
    round1.target_models.set([_model(sentiment_task, "a")])
    set_round_status(round=round1, status=Round.Status.CLOSED, acting_user=owner)
    client.force_login(owner)

    response = client.post("/tasks/sentiment/console/rounds/1/loop/add", {"model": _model(sentiment_task, "b").pk})

    assert response.status_code == 400 and "Round 1 is closed: its loop can no longer change." in response.content.decode()


def test_the_rounds_page_lists_what_the_open_round_lacks(client, owner, sentiment_task):
    round1 = sentiment_task.current_round()
    round1.target_models.clear()
    round1.contexts.update(active=False)
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/rounds/").content.decode()

    gaps = page[page.index("data-round-gaps"):]
    assert "No model in the loop: add one" in gaps and "No context yet" in gaps


def test_others_and_another_tasks_models_are_refused(client, owner, annotator, sentiment_task, chat_task):
    round1 = sentiment_task.current_round()
    round1.target_models.set([_model(sentiment_task, "mine")])
    foreign = MLModel.objects.create(task=chat_task, name="foreign", path="/models/foreign")
    client.force_login(annotator)
    assert client.post("/tasks/sentiment/console/rounds/1/loop/add", {"model": _model(sentiment_task, "x").pk}).status_code == 403
    client.force_login(owner)

    response = client.post("/tasks/sentiment/console/rounds/1/loop/add", {"model": foreign.pk})

    assert response.status_code == 400
    assert list(round1.target_models.values_list("name", flat=True)) == ["mine"]
