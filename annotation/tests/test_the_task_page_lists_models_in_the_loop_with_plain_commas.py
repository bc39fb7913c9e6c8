"""The task page lists a round's models in the loop as "chat-alpha, chat-beta", with no space before
the comma."""

from tasks.models import MLModel


def test_the_names_are_separated_by_a_comma_and_a_space(client, annotator, sentiment_task):
    round = sentiment_task.current_round()
    for name in ("chat-alpha", "chat-beta"):
        round.target_models.add(MLModel.objects.create(task=sentiment_task, name=name, path="/nowhere", status=MLModel.Status.EVALUATED))
    client.force_login(annotator)

    page = client.get(f"/tasks/{sentiment_task.code}/").content.decode()

    assert "chat-alpha, chat-beta" in page or "chat-beta, chat-alpha" in page
    assert " ," not in page.split('id="rounds"')[1].split("</table>")[0]

