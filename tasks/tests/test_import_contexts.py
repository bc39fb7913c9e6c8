"""``manage.py import_contexts`` loads real prompts and premises as a round's contexts."""

import pytest
from django.core.management import CommandError, call_command

from tasks.models import Context, Round
from tests.shared_data import shared_file


def test_it_imports_dynasent_prompt_sentences_as_sentiment_contexts_into_a_new_closed_round(sentiment_task):
    path = shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl")

    summary = call_command(
        "import_contexts", "sentiment", "2", str(path), "--create-round",
        "--map", "prompt=prompt_data.prompt_sentence", "--uid", "text_id", "--tag", "prompt_data.review_rating",
    )

    round2 = Round.objects.get(task=sentiment_task, number=2)
    assert summary == "sentiment round 2 contexts: 720 added, 0 already present"
    assert round2.status == Round.Status.CLOSED
    context = round2.contexts.get(uid="r2-0018536")
    assert context.data == {"prompt": "From what I heard, the vegetarian special, a vegetable risotto, was also a great choice."}
    assert context.tag == "4"


def test_it_imports_each_distinct_anli_premise_once_with_content_uids(nli_task):
    path = str(shared_file("anli/ANLI_analysis_r1_dev.csv"))
    round1 = nli_task.rounds.get(number=1)
    seeded = round1.contexts.count()

    summary = call_command("import_contexts", "nli", "1", path, "--map", "premise=context", "--uid-from-content")
    again = call_command("import_contexts", "nli", "1", path, "--map", "premise=context", "--uid-from-content")

    assert summary == "nli round 1 contexts: 845 added, 0 already present, 155 repeats skipped"
    assert again == "nli round 1 contexts: 0 added, 845 already present, 155 repeats skipped"
    assert round1.contexts.count() == seeded + 845
    assert all(set(c.data) == {"premise"} for c in round1.contexts.all())


def test_it_refuses_a_round_that_does_not_exist_without_create_round(nli_task, tmp_path):
    path = tmp_path / "premises.jsonl"
    path.write_text('{"uid": "p1", "premise": "A man sleeps."}\n')

    with pytest.raises(CommandError, match="task nli has no round 7; create it in the admin or pass --create-round"):
        call_command("import_contexts", "nli", "7", str(path))

    assert not Round.objects.filter(task=nli_task, number=7).exists()
    assert not Context.objects.filter(uid="p1").exists()
