"""The ``dynabench`` exit status a shell script branches on: 4 without a valid token, 5 for an unknown
model or a missing file, 9 while a model is in progress, 7 when its evaluation failed (with the
reason), 10 when no server answers, 2 for a wrong command line."""

import socket

from rest_framework.authtoken.models import Token

from tasks.models import MLModel
from tests.cli_support import dynabench


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_exit_codes(live_server, researcher, sentiment_task, tmp_path):
    config = tmp_path / "config.json"
    token = Token.objects.create(user=researcher).key
    queued = MLModel.objects.create(task=sentiment_task, owner=researcher, name="queued", status=MLModel.Status.QUEUED)
    failed = MLModel.objects.create(task=sentiment_task, owner=researcher, name="broken", status=MLModel.Status.FAILED,
                                    failure_reason="the weights file is damaged")

    bad_token = dynabench("status", queued.pk, url=live_server.url, token="not-a-token", config=config)
    unknown = dynabench("status", 999999, url=live_server.url, token=token, config=config)
    in_progress = dynabench("status", queued.pk, url=live_server.url, token=token, config=config)
    broken = dynabench("wait", failed.pk, url=live_server.url, token=token, config=config)
    missing_file = dynabench("check", tmp_path / "nothing.jsonl", "--task", "sentiment", url=live_server.url, token=token, config=config)
    unreachable = dynabench("tasks", url=f"http://127.0.0.1:{_closed_port()}", token=token, config=config)
    usage = dynabench("submit", "predictions", url=live_server.url, token=token, config=config)

    assert bad_token.returncode == 4 and "401" in bad_token.stderr
    assert unknown.returncode == 5
    assert in_progress.returncode == 9 and "queued" in in_progress.stdout
    assert broken.returncode == 7 and "the weights file is damaged" in broken.stdout
    assert missing_file.returncode == 5
    assert unreachable.returncode == 10 and "Cannot reach" in unreachable.stderr
    assert usage.returncode == 2
