"""One task cannot hold two models under one name: adding an endpoint under a name the task already
has (whatever its case) is refused on the form, naming the field; the first stays alone."""

from tasks.models import MLModel


def _add(client, task, endpoint_server, name):
    return client.post(f"/tasks/{task.code}/console/endpoints/add", {
        "name": name, "base_url": endpoint_server.url + "/v1", "model_name": "tiny-gpt2", "api": "chat",
        "timeout_s": 10, "max_retries": 1, "max_concurrency": 2,
    })


def test_the_second_endpoint_of_one_name_is_refused(client, owner, sentiment_task, endpoint_server):
    client.force_login(owner)

    first = _add(client, sentiment_task, endpoint_server, "chat-alpha")
    second = _add(client, sentiment_task, endpoint_server, " Chat-Alpha ")

    assert first.status_code == 302 and second.status_code == 400
    assert "already has a model named" in second.content.decode()
    assert MLModel.objects.filter(task=sentiment_task, name__iexact="chat-alpha").count() == 1
