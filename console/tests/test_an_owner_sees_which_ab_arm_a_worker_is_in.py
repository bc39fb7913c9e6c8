"""On a person's console page the owner sees, for each round whose writing assistant splits workers,
the arm the person is in (assisted or control), the same arm the create page gives them."""

from annotation.assist import arm_of
from annotation.models import RoundAssistant
from tasks.models import MLModel


def test_the_person_page_names_the_arm(client, owner, annotator, sentiment_task):
    round = sentiment_task.current_round()
    model = MLModel.objects.create(task=sentiment_task, name="assistant", kind=MLModel.Kind.ENDPOINT)
    RoundAssistant.objects.create(round=round, model=model, ab_split=True)
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/people/{annotator.username}/").content.decode()

    arm = arm_of(round=round, user=annotator)
    assert arm in ("assisted", "control")
    assert f'<span class="badge" data-arm="{round.number}">{arm}</span>' in page


def test_no_split_says_nothing(client, owner, annotator, sentiment_task):
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/people/{annotator.username}/").content.decode()

    assert "data-ab-arms" not in page
