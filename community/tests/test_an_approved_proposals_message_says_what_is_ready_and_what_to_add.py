"""The notification of an approved proposal says what its task has (round 1 open, its contexts, the
dataset file waiting for its mapping) and what the new owner must add before annotators can write (a
model in the loop, and where to add one), instead of calling a round without a model "ready"."""

from django.core.files.uploadedfile import SimpleUploadedFile

from community.models import Notification
from community.proposals import approval_summary, decide_proposal, submit_proposal
from community.tests.proposal_support import definition_file, proposal_fields
from tasks.models import Context, Task
from tests.api.conftest import run_worker


def test_the_message_names_the_missing_model_and_where_to_add_it(researcher, admin_user, django_capture_on_commit_callbacks):
    dataset = SimpleUploadedFile("first.jsonl", b'{"uid": "a", "claim": "Ice melts.", "label": "supports"}\n')
    proposal = submit_proposal(proposer=researcher, fields=proposal_fields(), definition_file=definition_file(), dataset_file=dataset)

    with django_capture_on_commit_callbacks(execute=True):
        decide_proposal(proposal=proposal, reviewer=admin_user, decision="approve")
    run_worker()

    message = Notification.objects.get(user=researcher, kind="proposal_decided").message
    assert "ready" not in message
    assert "task climate-claims is yours" in message
    assert "Round 1 is open with 0 contexts." in message
    assert "No model in the loop" in message and "Rounds page" in message
    assert "No context yet" in message
    assert "dataset file waits for its column mapping" in message


def test_a_round_with_a_model_and_contexts_says_annotators_can_write(sentiment_task, tiny_classifier_dir):
    from annotation.tests.conftest import put_in_loop

    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    round = sentiment_task.current_round()
    contexts = Context.objects.filter(round=round, active=True).count()

    summary = approval_summary(Task.objects.get(pk=sentiment_task.pk))

    assert summary == f"Round {round.number} is open with {contexts} contexts and 1 model in the loop. Annotators can write now."
