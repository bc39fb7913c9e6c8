"""A researcher proposes a task; an admin sends it back with a message, the researcher revises it, the
admin approves it: the task exists as ``create_task`` makes it (round 1 open), the researcher owns it,
the first dataset waits on the console for its column mapping, and each decision reaches the
researcher as a notification from a job."""

from django.core.files.uploadedfile import SimpleUploadedFile

from community.models import Notification, TaskProposal
from community.proposals import decide_proposal, revise_proposal, submit_proposal
from community.tests.proposal_support import definition_file, proposal_fields
from tasks.models import Task, Upload
from tests.api.conftest import run_worker


def test_send_back_revise_approve(researcher, admin_user, django_capture_on_commit_callbacks):
    dataset = SimpleUploadedFile("first.jsonl", b'{"uid": "a", "claim": "Ice melts.", "label": "supports"}\n')
    proposal = submit_proposal(proposer=researcher, fields=proposal_fields(), definition_file=definition_file(), dataset_file=dataset)
    with django_capture_on_commit_callbacks(execute=True):
        decide_proposal(proposal=proposal, reviewer=admin_user, decision="changes", message="Add a third label: not enough info.")
    assert not Notification.objects.exists()  # queued, not written in the request
    run_worker()
    revised = revise_proposal(proposal=TaskProposal.objects.get(pk=proposal.pk), proposer=researcher,
                              fields=proposal_fields(labels=["supports", "refutes", "not enough info"]))
    with django_capture_on_commit_callbacks(execute=True):
        approved = decide_proposal(proposal=revised, reviewer=admin_user, decision="approve")
    run_worker()

    task = Task.objects.get(code="climate-claims")
    assert approved.task == task and approved.status == "approved" and approved.revision == 2
    assert task.labels == ["supports", "refutes", "not enough info"] and task.config["license"] == "CC-BY-4.0"
    assert task.is_owner(researcher) and task.rounds.get(number=1).status == "open"
    upload = Upload.objects.get(task=task)
    assert upload.options["name"] == "climate-claims-first" and upload.uploaded_by == researcher and upload.rows == 1
    notes = list(Notification.objects.filter(user=researcher).order_by("pk").values_list("kind", "message", "url"))
    assert [n[0] for n in notes] == ["proposal_decided", "proposal_decided"]
    assert "sent back for changes" in notes[0][1] and "not enough info" in notes[0][1]
    assert "approved" in notes[1][1] and notes[1][2] == "/tasks/climate-claims/console/"
