"""``manage.py ensure_default_models``: train each default task's seed model if it is missing.

Idempotent: a second run checks the records and their files, trains nothing and says so.
``make run`` calls it after seeding the tasks.
"""

import resource
import time

from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks.models import Task
from tasks.seed import DEFAULT_TASK_CODES, seed_task
from tasks.training import DEFAULT_MODEL_NAME, ensure_default_model


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Command(BaseCommand):
    help = "Train the default target model of each default task from the seed set, when it is missing."

    def add_arguments(self, parser):
        parser.add_argument("--epochs", type=int, help="Epochs for models trained now (default: tuned per task kind)")

    def handle(self, *args, epochs=None, **options):
        if epochs is not None and epochs < 1:
            raise CommandError("--epochs must be at least 1.")
        started, cpu = time.monotonic(), _cpu_seconds()
        results = []
        for code in DEFAULT_TASK_CODES:
            task = Task.objects.filter(code=code).first() or seed_task(code)[0]
            try:
                result = ensure_default_model(task, epochs=epochs)
            except RuleError as exc:
                raise CommandError(f"{code}: {exc.message}")
            if result.trained:
                info = result.model.training_info
                self.stderr.write(
                    f"  {code}: trained {DEFAULT_MODEL_NAME} (model {result.model.pk}) on {info['examples']} seed examples "
                    f"in {result.seconds:.1f}s"
                )
            results.append(result)
        trained = [r.task for r in results if r.trained]
        looped = [r.task for r in results if r.put_in_loop]
        if not trained and not looped:
            return f"Nothing to do: the {len(results)} default models are present and intact."
        summary = (
            f"Default models: trained {len(trained)} ({', '.join(trained) or 'none'}), "
            f"{len(results) - len(trained)} already present; put in the loop of round 1: {', '.join(looped) or 'none'}; "
            f"{time.monotonic() - started:.1f}s wall, {_cpu_seconds() - cpu:.1f}s CPU"
        )
        return summary
