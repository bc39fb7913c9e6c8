"""A side-by-side comparison is blind until it is judged: the state token the client holds is sealed
(encrypted and authenticated), so decoding it as a signed token, or reading its bytes, shows neither
model's id nor name; a changed token is refused."""

import base64
import zlib

from django.core import signing

from tests.api.conftest import client_for


def test_the_state_of_a_comparison_reveals_no_model(annotator, chat_task, endpoint_server):
    api = client_for(annotator)
    body = api.post(f"/api/v1/tasks/{chat_task.code}/chat", {"mode": "side_by_side", "accept_content_warning": True},
                    format="json").json()
    token = body["state"]
    alpha, beta = chat_task.loop
    for model in (alpha, beta):
        assert model.name not in token and model.name not in body.__repr__()
    try:  # what a curious client would try: the signed token's payload
        raw = base64.urlsafe_b64decode(token.split(":")[0] + "==")
        readable = zlib.decompress(raw[1:] if raw[:1] == b"." else raw).decode()
    except Exception:  # noqa: BLE001 - not decodable at all: that is the point
        readable = ""
    assert '"models"' not in readable
    try:
        signing.loads(token, salt=f"dynabench.chat:{annotator.pk}:{chat_task.pk}")
        opened = True
    except signing.BadSignature:
        opened = False
    assert not opened

    changed = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    refused = api.post(f"/api/v1/tasks/{chat_task.code}/chat/turns", {"state": changed, "prompt": "hello"}, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "chat_expired"
    answered = api.post(f"/api/v1/tasks/{chat_task.code}/chat/turns", {"state": token, "prompt": "hello"}, format="json")
    assert answered.status_code == 200
