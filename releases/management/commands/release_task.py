"""``manage.py release_task TASK``: build a release of a task's public datasets now, in this process."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from releases.build import build
from releases.services import request_release
from tasks.models import Task


class Command(BaseCommand):
    help = ("Build a release of a task's public datasets of its closed rounds (JSONL, Parquet, dataset card, Croissant, "
            "citation) in this process, as one of its owners. Example: release_task sentiment --as olga")

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. sentiment.")
        parser.add_argument("--as", dest="username", required=True, help="The owner the release is made by.")
        parser.add_argument("--dataset", type=int, action="append", default=[], metavar="ID",
                            help="Release only this dataset (repeatable; default: every public dataset of the closed rounds).")

    def handle(self, *args, **options):
        task = Task.objects.filter(code=options["task"]).first()
        if task is None:
            raise CommandError(f"no task with code {options['task']!r}")
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        try:
            release = request_release(task=task, acting_user=user, dataset_ids=options["dataset"], queue=False)
        except RuleError as exc:
            raise CommandError(exc.message) from None

        release = build(release.pk)
        if release.status != release.Status.PUBLISHED:
            raise CommandError(f"release failed: {release.failure_reason}")
        return f"release {task.code} {release.version}: {release.example_count} examples, {release.size} bytes, sha256 {release.sha256}"
