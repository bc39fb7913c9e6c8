"""``manage.py create_task DEFINITION.json``: a new task from a definition file, no code.

The file holds what ``tasks.seed.create_task`` takes (code, name, kind, instructions, config,
and optionally content_warning, collecting and starter contexts), as the default tasks in
``tasks/default_tasks/`` and the examples in ``tasks/task_definitions/`` do. Idempotent: an
existing task keeps its settings. Owners are added afterwards in the admin (or the console).
"""

import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tasks.seed import create_task


class Command(BaseCommand):
    help = "Create a task (any registered kind, collecting or evaluation-only) from a JSON definition file."

    def add_arguments(self, parser):
        parser.add_argument("definition", type=Path, help="A task definition (.json), e.g. tasks/task_definitions/adversarial-nibbler.json.")

    def handle(self, *args, **options):
        path = options["definition"]
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise CommandError(f"{path} is not valid JSON: line {error.lineno}: {error.msg}") from None
        if not isinstance(spec, dict):
            raise CommandError(f"{path} must hold a JSON object")
        missing = [key for key in ("code", "name", "kind", "instructions", "config") if key not in spec]
        if missing:
            raise CommandError(f"{path} lacks {', '.join(missing)}")
        try:
            task, created = create_task(spec)
        except ValidationError as error:
            raise CommandError(f"{path}: {'; '.join(error.messages)}") from None
        except KeyError as error:
            raise CommandError(f"{path}: unknown task kind or missing key: {error}") from None
        kind = "evaluation-only benchmark" if not task.collecting else "collecting task"
        return f"{'created' if created else 'kept existing'} {kind} {task.code} ({task.spec.display_name})"
