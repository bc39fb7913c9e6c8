"""From the console an owner adds a model behind an endpoint (the key write-only), opens the next
round with it in the loop and a call budget; annotators then write examples against it, and the
rounds page shows the endpoint's use against the budget."""

from annotation.models import Example
from annotation.services import create_example
from tasks.models import Endpoint, MLModel, Round
from validation import round_close
from validation.tests.conftest import make_example

KEY = "sk-console-secret-41d7"


def test_an_owner_adds_an_endpoint_and_opens_a_round_with_it(client, owner, annotator, sentiment_task, endpoint_server):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/endpoints/add", {
        "name": "tiny-gpt2 via vLLM", "base_url": endpoint_server.url + "/v1", "model_name": "tiny-gpt2", "api": "chat",
        "temperature": 0, "max_tokens": 8, "seed": 3, "api_key": KEY, "timeout_s": 10, "max_retries": 1, "max_concurrency": 2,
    })
    assert response.status_code == 302
    model = MLModel.objects.get(name="tiny-gpt2 via vLLM")
    assert model.kind == "endpoint" and Endpoint.objects.get(model=model).api_key_encrypted not in ("", KEY)

    for _ in range(20):
        make_example(sentiment_task, annotator, validation_state="verified_correct")
    round_close.close_round(round=sentiment_task.rounds.get(number=1), acting_user=owner, ratios={"train": .4, "dev": .3, "test": .3}, seed=1)
    response = client.post("/tasks/sentiment/console/rounds/open", {
        "target_models": [model.pk], "loop_rule": "round_robin", "endpoint_call_budget": 50,
    })
    assert response.status_code == 302
    round2 = Round.objects.get(task=sentiment_task, number=2)
    assert list(round2.target_models.all()) == [model] and round2.endpoint_call_budget == 50

    context = round2.contexts.create(uid="c1", data={})
    example = create_example(user=annotator, context=context, input={"text": "the food was great"}, target={"label": "positive"})
    assert example.model == model and example.model_output["endpoint"]["params"]["seed"] == 3
    assert endpoint_server.requests[-1]["authorization"] == f"Bearer {KEY}"

    page = client.get("/tasks/sentiment/console/rounds/").content.decode()
    assert "Endpoint use: 1 calls of 50" in page
    assert KEY not in page and Example.objects.filter(round=round2).count() == 1
    dashboard = client.get("/tasks/sentiment/console/dashboard/").content.decode()
    assert "Endpoint models in this round: 1 calls of a budget of 50" in dashboard
    assert "tiny-gpt2 via vLLM" in dashboard


def test_a_metadata_url_is_refused_on_the_form(client, owner, sentiment_task, endpoint_server):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/endpoints/add", {
        "name": "meta", "base_url": "http://169.254.169.254/v1", "model_name": "x", "api": "chat", "api_key": KEY,
        "timeout_s": 10, "max_retries": 1, "max_concurrency": 2,
    })
    assert response.status_code == 400
    html = response.content.decode()
    assert "link-local" in html and KEY not in html
    assert not MLModel.objects.filter(name="meta").exists()
