"""``manage.py train_target_model TASK [--data FILE --map model_field=file_field ... --uid FIELD]
[--from-validated] [--epochs N] [--name NAME] [--in-loop ROUND]``.

Fine-tunes the MiniLM encoder for TASK on the seed examples (or on ``--data``), plus the
task's validated examples with ``--from-validated`` (their final labels, dev and test splits
left out: ``validation.selectors.retraining_rows``), registers the model and prints a
one-line summary.
"""

from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from dynabench.errors import RuleError
from tasks.data.importers.files import parse_assignments
from tasks.data.seed_split import seed_data_path
from tasks.loop.training.error_codes import TrainingErrorCode
from tasks.loop.training.examples import file_examples, seed_examples, validated_training_examples
from tasks.loop.training.hyperparameters import default_hyperparameters
from tasks.loop.training.records import put_in_loop
from tasks.loop.training.runs import train_new_model
from tasks.models import Task
from validation.selectors import retraining_rows


class Command(BaseCommand):
    help = "Fine-tune a target model for a task (seed data by default) and register it."

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. sentiment")
        parser.add_argument("--data", type=Path, help="JSONL or CSV file of training examples (replaces the seed set)")
        parser.add_argument(
            "--map", action="append", default=[], metavar="FIELD=SOURCE",
            help="Read model field FIELD from file field SOURCE (a dotted path reaches into nested JSON), as in "
        "import_dataset, e.g. --map text=sentence --map label=gold_label. Repeatable.",
        )
        parser.add_argument("--uid", dest="uid_field", help="File field holding each row's id (default: row number)")
        parser.add_argument("--from-validated", action="store_true", help="Add the task's validated examples")
        parser.add_argument("--epochs", type=int, help="Epochs (default: tuned per task kind)")
        parser.add_argument("--name", help="Model name, a slug (default: minilm-<source>-<timestamp>)")
        parser.add_argument("--in-loop", type=int, metavar="ROUND", help="Put the trained model in the loop of this round")

    def handle(self, *args, task, data, map, uid_field, from_validated, epochs, name, in_loop, **options):
        task_obj = Task.objects.filter(code=task).first()
        if task_obj is None:
            raise CommandError(f"No task with code {task!r} (known: {', '.join(Task.objects.values_list('code', flat=True))}).")
        if epochs is not None and epochs < 1:
            raise CommandError("--epochs must be at least 1.")
        try:
            examples, sources = self._examples(task_obj, data, map, uid_field, from_validated)
            hp = default_hyperparameters(task_obj)
            if epochs:
                hp.epochs = epochs
            origin = "file" if data else "seed"
            name = name or f"minilm-{origin}{'-validated' if from_validated else ''}-{timezone.now():%Y%m%d-%H%M%S}"
            ml_model = train_new_model(task=task_obj, examples=examples, name=name, data_sources=sources, hp=hp)
            loop = put_in_loop(ml_model, in_loop) if in_loop else None
        except RuleError as exc:
            raise CommandError(exc.message)
        counts = Counter(ex.source for ex in examples)
        info = ml_model.training_info
        summary = (
            f"Trained {task_obj.code}/{ml_model.name} (model {ml_model.pk}) on {len(examples)} examples "
            f"({', '.join(f'{source} {n}' for source, n in sorted(counts.items()))}), "
            f"{hp.epochs} epochs in {info['duration_s']:.1f}s, final loss {info['figures']['final_loss']}"
        )
        skipped = sources.get("file", {}).get("skipped")
        if skipped:
            summary += f"; skipped {sum(skipped.values())} rows ({', '.join(f'{r}: {n}' for r, n in skipped.items())})"
        if loop:
            summary += f"; in the loop of round {loop.number}"
        return summary

    def _examples(self, task, data, mapping, uid_field, from_validated):
        sources = {}
        if data:
            mapping = parse_assignments(mapping, option="--map")
            read = file_examples(task, data, mapping=mapping, uid_field=uid_field)
            examples = read.examples
            sources["file"] = {
                "file": str(data.resolve()), "sha256": read.checksum, "rows": read.rows,
                "map": mapping, "uid_field": uid_field, "skipped": dict(read.skipped),
            }
        else:
            examples = seed_examples(task)
            sources["seed"] = {"file": f"tasks/data/seed_data/{seed_data_path(task).name}"}
        if from_validated:
            examples += validated_training_examples(task, retraining_rows(task))
        if not examples:
            raise RuleError(TrainingErrorCode.NO_EXAMPLES, f"No usable training examples for task {task.code}.")
        return examples, sources
