"""The dry runs (``dynabench check``) have their own per-user rate, ``API_RATE_MODEL_CHECKS``: past it a
429, while real submissions keep their own allowance."""

import io
import json

from django.conf import settings
from django.test import override_settings

from tests.api.conftest import client_for

RATES = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "model_checks": "2/day"}}


def _predictions():
    rows = [{"uid": f"{n}-{i}", "label": "neutral"} for n in ("sent-r1-dev", "sent-r1-test") for i in range(3)]
    upload = io.BytesIO("".join(json.dumps(r) + "\n" for r in rows).encode())
    upload.name = "p.jsonl"
    return {"task": "sentiment", "predictions": upload}


@override_settings(REST_FRAMEWORK=RATES)
def test_the_third_check_of_the_day_is_refused(researcher, sentiment_datasets):
    client = client_for(researcher)

    answers = [client.post("/api/v1/models/predictions/check", _predictions(), format="multipart").status_code for _ in range(3)]
    submitted = client.post("/api/v1/models/predictions", {**_predictions(), "name": "real"}, format="multipart")

    assert answers == [200, 200, 429]
    assert submitted.status_code == 201
