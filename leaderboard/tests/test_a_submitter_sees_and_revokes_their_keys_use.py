"""A researcher's model page shows them, and only them, what their endpoint's key was used for (per
task, purpose and outcome) and lets them give or take back consent purpose by purpose; a purpose they
take back is refused on the next call."""

import pytest
from django.test import Client

from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.registry import get_predictor
from tasks.models import Endpoint, Purpose


def test_the_submitter_sees_the_calls_and_revokes_a_purpose(researcher, owner, sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, name="rita-endpoint", owner=researcher, consents=["loop", "assist"], published=True)
    with gate.admit(model, Purpose.LOOP, user=owner, round=sentiment_task.current_round()):
        get_predictor(model).predict([{"text": "used in the loop"}])

    mine = Client()
    mine.force_login(researcher)
    page = mine.get(f"/models/{model.pk}/").content.decode()
    assert "Your key&#x27;s use" in page or "Your key's use" in page
    assert 'value="loop" checked' in page and 'value="assist" checked' in page and 'value="transfer" checked' not in page
    assert "<td>sentiment</td><td>loop</td><td>ok</td><td class=\"num\">1</td>" in page

    saved = mine.post(f"/models/{model.pk}/consents/", {"consents": ["assist"]})
    assert saved.status_code == 302
    assert Endpoint.objects.get(model=model).consents == ["assist"]
    with pytest.raises(RuleError) as refused:
        with gate.admit(model, Purpose.LOOP, user=owner, round=sentiment_task.current_round()):
            get_predictor(model).predict([{"text": "after the revocation"}])
    assert refused.value.code == gate.CONSENT_MISSING and len(endpoint_server.requests) == 1

    theirs = Client()
    theirs.force_login(owner)
    assert "Your key" not in theirs.get(f"/models/{model.pk}/").content.decode()
    assert theirs.post(f"/models/{model.pk}/consents/", {"consents": ["loop"]}).status_code == 403
    assert Endpoint.objects.get(model=model).consents == ["assist"]
