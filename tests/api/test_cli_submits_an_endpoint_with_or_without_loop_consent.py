"""``dynabench submit endpoint URL`` submits a model behind an OpenAI-compatible API and prints its id;
``--allow-loop`` records the researcher's consent to annotation loops, which is off without it."""

from rest_framework.authtoken.models import Token

from tasks.models import MLModel
from tests.cli_support import dynabench


def test_submit_endpoint_records_consent_only_with_allow_loop(live_server, researcher, sentiment_task, endpoint_server, default_queue, tmp_path):
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    common = ("--task", "sentiment", "--model-name", "tiny-gpt2", "--temperature", "0", "--max-tokens", "4")

    plain = dynabench("submit", "endpoint", endpoint_server.url, *common, "--name", "plain", **cli)
    allowed = dynabench("submit", "endpoint", endpoint_server.url, *common, "--name", "allowed", "--allow-loop", **cli)

    assert plain.returncode == 0 and allowed.returncode == 0, plain.stderr + allowed.stderr
    assert MLModel.objects.get(pk=int(plain.stdout)).endpoint.loop_allowed is False
    model = MLModel.objects.get(pk=int(allowed.stdout))
    assert (model.name, model.owner, model.endpoint.loop_allowed) == ("allowed", researcher, True)
    assert model.endpoint.params == {"temperature": 0.0, "max_tokens": 4}
