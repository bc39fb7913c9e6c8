"""``manage.py create_task DEFINITION.json``: a new task from a definition file, no code.

The file holds what ``tasks.data.seed.create_task`` takes (code, name, kind, instructions, config,
and optionally content_warning, collecting and starter contexts), as the default tasks in
``tasks/data/default_tasks/`` and the examples in ``tasks/data/task_definitions/`` do. Idempotent: an
existing task keeps its settings. The file is checked as the console's New task page and a task
proposal check it (``tasks.data.definitions.check_definition_file``: each problem on its line). Owners are added afterwards in the admin (or the console).
"""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tasks.data.definitions import DefinitionProblems, check_definition_file
from tasks.data.seed import create_task


class Command(BaseCommand):
    help = "Create a task (any registered kind, collecting or evaluation-only) from a JSON definition file."

    def add_arguments(self, parser):
        parser.add_argument("definition", type=Path, help="A task definition (.json), e.g. tasks/data/task_definitions/adversarial-nibbler.json.")

    def handle(self, *args, **options):
        path = options["definition"]
        try:
            spec = check_definition_file(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path} is not UTF-8 text") from None
        except DefinitionProblems as problems:
            raise CommandError(f"{path}: " + "; ".join(problems.problems)) from None
        try:
            task, created = create_task(spec)
        except ValidationError as error:
            raise CommandError(f"{path}: {'; '.join(error.messages)}") from None
        kind = "evaluation-only benchmark" if not task.collecting else "collecting task"
        return f"{'created' if created else 'kept existing'} {kind} {task.code} ({task.spec.display_name})"
