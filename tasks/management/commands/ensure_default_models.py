"""``manage.py ensure_default_models [--inline]``: the default models of each default task, trained when missing.

Each default task gets the models of ``tasks.loop.training.default_models.DEFAULT_MODELS`` (``minilm-seed``, in the
loop of round 1, and the cheaper ``minilm-few`` baseline), trained from the seed train split
only. By default the records are created at once (status ``training``) and the training runs
in the background as RQ jobs on the ``training`` queue (``tasks.jobs``), the models in the loop
first, so ``make run`` serves pages within seconds; ``--inline`` trains here and now (CI, tests,
scripts). Idempotent: a second run checks the records and their files, queues or trains nothing
that is present, intact or already queued, and says so.
"""

import resource
import time

from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks import jobs
from tasks.models import Task
from tasks.data.seed import DEFAULT_TASK_CODES, seed_task
from tasks.loop.training.default_models import DEFAULT_MODELS, prepare_default_model, train_default_model


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Command(BaseCommand):
    help = (
        "Make sure every default task has its default models (trained from the seed train split): "
        "queue their training on the 'training' RQ queue, or train them now with --inline."
    )

    def add_arguments(self, parser):
        parser.add_argument("--epochs", type=int, help="Epochs for models trained now (default: tuned per task kind)")
        parser.add_argument("--inline", action="store_true", help="Train here and now instead of queueing RQ jobs.")

    def handle(self, *args, epochs=None, inline=False, **options):
        if epochs is not None and epochs < 1:
            raise CommandError("--epochs must be at least 1.")
        started, cpu = time.monotonic(), _cpu_seconds()
        tasks = [Task.objects.filter(code=code).first() or seed_task(code)[0] for code in DEFAULT_TASK_CODES]
        done, queued, waiting, present, looped = [], [], [], 0, []
        for entry in DEFAULT_MODELS:  # the models in the loop first: the write pages wait for them
            for task in tasks:
                label = f"{task.code}/{entry.name}"
                try:
                    result = prepare_default_model(task, entry)
                    if result.put_in_loop:
                        looped.append(task.code)
                    if not result.needs_training:
                        present += 1
                    elif inline:
                        model = train_default_model(result.model, epochs=epochs)
                        info = model.training_info
                        self.stderr.write(
                            f"  {label}: trained (model {model.pk}) on {info['examples']} seed train examples "
                            f"in {info['duration_s']:.1f}s"
                        )
                        done.append(label)
                    elif jobs.training_job_alive(result.model):
                        waiting.append(label)
                    else:
                        jobs.enqueue_default_training(result.model, epochs=epochs)
                        queued.append(label)
                except RuleError as exc:
                    raise CommandError(f"{label}: {exc.message}")
        total = len(DEFAULT_MODELS) * len(tasks)
        if not (done or queued or waiting or looped):
            return f"Nothing to do: the {total} default models are present and intact."
        parts = []
        if inline:
            parts.append(f"trained {len(done)} ({', '.join(done) or 'none'})")
        else:
            parts.append(f"queued {len(queued)} for training on the 'training' queue ({', '.join(queued) or 'none'})")
            if waiting:
                parts.append(f"{len(waiting)} already queued or training ({', '.join(waiting)})")
        parts.append(f"{present} already present")
        parts.append(f"put in the loop of round 1: {', '.join(looped) or 'none'}")
        return f"Default models: {'; '.join(parts)}; {time.monotonic() - started:.1f}s wall, {_cpu_seconds() - cpu:.1f}s CPU"
