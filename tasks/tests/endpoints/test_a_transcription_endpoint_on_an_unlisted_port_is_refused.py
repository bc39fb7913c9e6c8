"""A transcription endpoint follows the same allow-list as chat endpoints: a URL on a port the allow-list
does not name is refused when the record is created (nothing stored, the message says which entry an admin
would add), and a listed server's record is refused again before a call once its entry is gone."""

from urllib.parse import urlsplit

import pytest

from dynabench.errors import RuleError
from tasks.loop.registry import get_predictor
from tasks.models import MLModel


@pytest.mark.django_db
def test_an_unlisted_port_is_refused_before_any_call(speech_task_with_clips, make_transcription_endpoint,
                                                     transcription_server, settings):
    task, contexts = speech_task_with_clips
    port = urlsplit(transcription_server.url).port
    other = port + 1 if port < 65535 else port - 1

    with pytest.raises(RuleError) as refused:
        make_transcription_endpoint(task, base_url=f"http://127.0.0.1:{other}/v1")
    assert refused.value.code == "endpoint_url_not_allowed" and f"127.0.0.1/32:{other}" in refused.value.message
    assert not MLModel.objects.filter(task=task, kind="endpoint").exists()

    model = make_transcription_endpoint(task)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = []
    with pytest.raises(RuleError) as refused_later:
        get_predictor(model).predict([{"clip": contexts[0].uid}])
    assert "allow-list" in refused_later.value.message or "DYNABENCH_ENDPOINT_ALLOWLIST" in refused_later.value.message
    assert transcription_server.requests == []
