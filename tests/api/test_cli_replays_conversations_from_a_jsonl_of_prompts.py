"""``dynabench chat TASK PROMPTS.jsonl`` replays conversations against a live server: the prompts are
the turns of a conversation until a line with a judgment (or the task's last turn); side by side,
every line is a comparison; the judgments come from the lines or the command line. A bad line is
refused (exit 3) before anything is sent."""

import json

from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token

from annotation.models import Example
from tests.cli_support import dynabench


def _cli(live_server, tmp_path):
    user = User.objects.create_user(username="replayer", password="pw-replayer")
    user.groups.add(Group.objects.get(name="annotator"))
    return dict(url=live_server.url, token=Token.objects.create(user=user).key, config=tmp_path / "config.json")


def _jsonl(path, lines) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_a_prompts_file_becomes_judged_conversations_and_comparisons(live_server, chat_task, endpoint_server, tmp_path):
    cli = _cli(live_server, tmp_path)
    prompts = _jsonl(tmp_path / "prompts.jsonl", [
        "tell me about the museum",
        {"prompt": "i hate waiting", "judgment": {"verdict": "fails", "category": "hate", "explanation": "It is hateful."}},
        "what year did it open",
    ])

    talked = dynabench("--json", "chat", chat_task.code, prompts, "--accept-content-warning", "--stream", "--verdict", "holds", **cli)
    pairs = _jsonl(tmp_path / "pairs.jsonl", ["hello there", {"prompt": "tell me a story", "judgment": {"preference": "a"}}])
    compared = dynabench("--json", "chat", chat_task.code, pairs, "--mode", "side_by_side", "--preference", "tie", **cli)

    assert talked.returncode == 0, talked.stderr
    first, second = [json.loads(line) for line in talked.stdout.splitlines()]
    assert [t["prompt"] for t in first["turns"]] == ["tell me about the museum", "i hate waiting"]
    assert [t["prompt"] for t in second["turns"]] == ["what year did it open"]
    conversations = Example.objects.filter(input__mode="conversation").order_by("pk")
    assert [e.pk for e in conversations] == [first["example"]["id"], second["example"]["id"]]
    assert [e.target["verdict"] for e in conversations] == ["fails", "holds"]
    assert [t["content"] for t in conversations[0].model_output["transcript"] if t["role"] == "assistant"] == [
        t["answers"][0] for t in first["turns"]]
    assert compared.returncode == 0, compared.stderr
    comparisons = [json.loads(line) for line in compared.stdout.splitlines()]
    assert len(comparisons) == 2 and all(len(c["turns"]) == 1 and len(c["turns"][0]["answers"]) == 2 for c in comparisons)
    stored = Example.objects.filter(input__mode="side_by_side").order_by("pk")
    assert [e.target["preference"] for e in stored] == ["tie", "a"]


def test_a_bad_line_is_refused_before_anything_is_sent(live_server, chat_task, endpoint_server, tmp_path):
    cli = _cli(live_server, tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"hello"\n{"text": "no prompt here"}\n')

    result = dynabench("chat", chat_task.code, bad, "--accept-content-warning", **cli)

    assert result.returncode == 3 and "line 2" in result.stderr
    assert endpoint_server.requests == [] and Example.objects.count() == 0
