"""What reaches the writing assistant: the context's visible fields and the task's instructions, never
a label, another example, or data a context holds beyond the task's context fields."""

import json

from annotation.models import RoundAssistant
from annotation.tests.helpers import HTMX, token_of
from tasks.models import Context


def test_the_request_holds_the_context_and_instructions_only(client, annotator, nli_task, nli_model, make_endpoint_model,
                                                              endpoint_server):
    round = nli_task.current_round()
    RoundAssistant.objects.create(round=round, model=make_endpoint_model(nli_task, name="assistant"))
    nli_task.instructions = "Write a hypothesis about the premise."
    nli_task.save(update_fields=["instructions"])
    Context.objects.filter(round=round).update(data={"premise": "A man is playing guitar on the street",
                                                     "gold_label": "SECRET-LABEL"})
    client.force_login(annotator)
    page = client.get(f"/tasks/{nli_task.code}/write/")
    client.post(f"/tasks/{nli_task.code}/write/submit",
                {"token": token_of(page), "hypothesis": "EARLIER-EXAMPLE", "label": "neutral"}, **HTMX)
    endpoint_server.requests.clear()
    page = client.get(f"/tasks/{nli_task.code}/write/")
    endpoint_server.scripted = [json.dumps({"hypothesis": "Nobody plays music", "label": "contradiction"})]

    assert client.post(f"/tasks/{nli_task.code}/write/suggest", {"token": token_of(page)}, **HTMX).status_code == 200

    [request] = endpoint_server.requests
    sent = json.dumps(request["body"]["messages"])
    assert "A man is playing guitar on the street" in sent and "Write a hypothesis about the premise." in sent
    assert "SECRET-LABEL" not in sent and "gold_label" not in sent and "EARLIER-EXAMPLE" not in sent
