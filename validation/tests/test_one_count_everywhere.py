"""One example, one state, on every page: the round page, the owner's dashboard and the author's
examples take their words and counts from the same definitions (``validation.round_statistics.round_states``,
``annotation.selectors.validation_status``): two fooling examples wait for validation, the one that
did not fool the model is "not validated" everywhere, not "pending" on one page and another thing
elsewhere. The task page offers writing only while a round is open."""

from tasks.models import Round
from tasks.services import set_round_status
from validation.tests.conftest import make_example


def test_the_round_page_the_dashboard_and_the_authors_page_agree(client, owner, annotator, sentiment_task):
    fooling = [make_example(sentiment_task, annotator) for _ in range(2)]
    not_fooling = make_example(sentiment_task, annotator, model_wrong=False)
    client.force_login(owner)

    round_page = client.get("/tasks/sentiment/rounds/1/").content.decode()
    assert '<tr data-state="waiting"><th>Waiting for validation</th><td>2</td>' in round_page
    assert '<tr data-state="not_validated"><th>Not validated: it did not fool the model</th><td>1</td>' in round_page
    dashboard = client.get("/tasks/sentiment/console/dashboard/").content.decode()
    assert 'data-count="queue">2<' in dashboard
    assert '<span data-state="not_validated">Not validated: it did not fool the model: 1</span>' in dashboard

    client.force_login(annotator)
    mine = client.get("/my/examples/?task=sentiment").content.decode()
    assert mine.count("Waiting for validation") == len(fooling)
    assert mine.count("Not validated: it did not fool the model") == 1 and not_fooling.model_wrong is False


def test_the_task_page_offers_writing_only_for_an_open_round(client, owner, sentiment_task):
    assert "Write examples for round 1" in client.get("/tasks/sentiment/").content.decode()

    set_round_status(round=sentiment_task.current_round(), status=Round.Status.CLOSED, acting_user=owner)

    page = client.get("/tasks/sentiment/").content.decode()
    assert "Write examples for round" not in page and "No round is open right now: round 1 closed" in page
