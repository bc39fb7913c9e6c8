"""An owner replaces the models in the loop of the open round from the console
(``tasks.services.set_loop_models``); others cannot, and a closed round or another task's model is refused."""

from django.urls import reverse

from tasks.models import MLModel


def test_the_owner_puts_both_endpoint_models_in_the_loop(client, chat_task, annotator):
    owner = annotator
    chat_task.owners.add(owner)
    round = chat_task.current_round()
    round.target_models.clear()
    alpha, beta = chat_task.loop
    client.force_login(owner)
    url = reverse("console:round_loop", args=[chat_task.code, round.number])
    assert client.get(url).status_code == 200
    response = client.post(url, {"target_models": [alpha.pk, beta.pk]})
    assert response.status_code == 302
    assert set(round.target_models.all()) == {alpha, beta}


def test_others_and_foreign_models_are_refused(client, chat_task, annotator, sentiment_task):
    round = chat_task.current_round()
    alpha, _ = chat_task.loop
    url = reverse("console:round_loop", args=[chat_task.code, round.number])
    client.force_login(annotator)
    assert client.post(url, {"target_models": [alpha.pk]}).status_code == 403
    chat_task.owners.add(annotator)
    foreign = MLModel.objects.create(task=sentiment_task, name="other", kind=MLModel.Kind.HF_DIRECTORY, path="/nowhere")
    response = client.post(url, {"target_models": [foreign.pk]})
    assert response.status_code == 400
    assert set(round.target_models.all()) == set(chat_task.loop)
    round.status = "closed"
    round.save()
    response = client.post(url, {"target_models": [alpha.pk]})
    assert response.status_code == 400 and b"closed" in response.content
