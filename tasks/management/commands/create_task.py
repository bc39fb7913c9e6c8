"""``manage.py create_task DEFINITION.json``: a new task from a definition file, no code.

The file holds what ``tasks.data.seed.create_task`` takes (code, name, kind, instructions, config,
and optionally content_warning, collecting and starter contexts), as the default tasks in
``tasks/data/default_tasks/`` and the examples in ``tasks/data/task_definitions/`` do. Idempotent: an
existing task keeps its settings. The file is checked as the console's New task page and a task
proposal check it (``tasks.data.definitions.check_definition_file``: each problem on its line).

``--owner USERNAME`` makes that existing user an owner of the task (created or kept), with the admin
access owners get (``tasks.services.grant_owner_admin_access``), in the same transaction; an unknown
username is refused before anything is stored. Without it the task has no owner until one is added
in the admin (or by another owner on the console).
"""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tasks.data.definitions import DefinitionProblems, check_definition_file
from tasks.data.seed import create_task
from tasks.services import grant_owner_admin_access


class Command(BaseCommand):
    help = "Create a task (any registered kind, collecting or evaluation-only) from a JSON definition file."

    def add_arguments(self, parser):
        parser.add_argument("definition", type=Path, help="A task definition (.json), e.g. tasks/data/task_definitions/adversarial-nibbler.json.")
        parser.add_argument("--owner", metavar="USERNAME", help="An existing user who becomes an owner of the task (it may run its console).")

    def handle(self, *args, **options):
        path = options["definition"]
        owner = None
        if options.get("owner"):
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user named {options['owner']!r}: create the account first "
                                   "(manage.py createsuperuser, or sign-up), then run this again with --owner")
        try:
            spec = check_definition_file(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path} is not UTF-8 text") from None
        except DefinitionProblems as problems:
            raise CommandError(f"{path}: " + "; ".join(problems.problems)) from None
        try:
            with transaction.atomic():
                task, created = create_task(spec)
                if owner is not None:
                    task.owners.add(owner)
                    grant_owner_admin_access(owner)
        except ValidationError as error:
            raise CommandError(f"{path}: {'; '.join(error.messages)}") from None
        kind = "evaluation-only benchmark" if not task.collecting else "collecting task"
        owners = ", ".join(task.owners.order_by("username").values_list("username", flat=True))
        who = f"owned by {owners}" if owners else "no owner yet (add one with --owner USERNAME, or in the admin)"
        return f"{'created' if created else 'kept existing'} {kind} {task.code} ({task.spec.display_name}), {who}"
