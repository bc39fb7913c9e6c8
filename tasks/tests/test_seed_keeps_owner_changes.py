"""Re-running the seed (``make run`` runs ``manage.py seed --demo`` each time) creates missing
tasks only: an owner's changed instructions and labels stay in place."""

from django.core.management import call_command

from tasks.models import Task
from tasks.services import update_task_settings


def test_reseeding_leaves_an_owners_instructions_and_labels_in_place(db):
    call_command("seed", "--demo", stdout=open("/dev/null", "w"))
    from django.contrib.auth.models import User

    owner = User.objects.get(username="owner")
    task = Task.objects.get(code="sentiment")
    update_task_settings(
        task=task, acting_user=owner, version=task.version, instructions="Our own instructions.", labels=["positive", "negative"],
        removed_labels={"neutral": "negative"},  # the seed sets carry 'neutral': say what it becomes
    )
    Task.objects.filter(code="nli").delete()

    call_command("seed", "--demo", stdout=open("/dev/null", "w"))

    task = Task.objects.get(code="sentiment")
    assert task.instructions == "Our own instructions." and task.labels == ["positive", "negative"]
    assert Task.objects.filter(code="nli").exists(), "a missing default task is created again"
    assert task.rounds.count() == 1
