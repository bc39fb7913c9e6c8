"""``manage.py import_dataset TASK NAME FILE``: load a labelled dataset that models are scored on."""

from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks.data.importers.datasets import import_dataset
from tasks.management.commands._import_options import add_file_arguments, file_spec, get_task, progress
from tasks.models import Dataset


class Command(BaseCommand):
    help = (
        "Import a dataset (items with gold labels or answers) for a task from JSONL or CSV. All-or-nothing; "
        "idempotent by uid. Example: import_dataset sentiment dynasent-r2-dev "
        "../shared/data/dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl --map text=sentence "
        "--map label=gold_label --uid text_id --split dev"
    )

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. nli, qa, sentiment, hate-speech.")
        parser.add_argument("name", help="Dataset name (a slug, unique within the task), e.g. anli-r1-dev.")
        add_file_arguments(parser)
        parser.add_argument("--round", type=int, help="Round the dataset belongs to (created closed if missing).")
        parser.add_argument("--access", choices=Dataset.Access.values, help="scoring (default: counts toward the Dynascore) or standard.")
        parser.add_argument(
            "--labels", dest="label_visibility", choices=Dataset.LabelVisibility.values,
            help="public or hidden (default: hidden for a test split or a scoring dataset, else public).",
        )
        parser.add_argument("--split", choices=[s for s in Dataset.Split.values if s], help="dev, test or train.")
        parser.add_argument("--weight", type=float, help="Weight in the Dynascore (default 1).")
        parser.add_argument(
            "--meta", action="append", default=[], metavar="FIELD",
            help="File field kept in each item's metadata (e.g. adversary_pred). Repeatable.",
        )

    def handle(self, *args, **options):
        task = get_task(options["task"])
        try:
            result = import_dataset(
                task=task, name=options["name"], spec=file_spec(options, meta_fields=options["meta"]),
                round_number=options["round"], access=options["access"], split=options["split"],
                weight=options["weight"], progress=progress(options), label_visibility=options["label_visibility"],
            )
        except RuleError as exc:
            raise CommandError(f"{options['file']}: {exc.message}") from None
        return result.summary()
