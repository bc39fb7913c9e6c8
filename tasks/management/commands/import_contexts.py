"""``manage.py import_contexts TASK ROUND FILE``: load contexts (premises, passages, prompts) into a round."""

from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks.data.importers.contexts import import_contexts
from tasks.management.commands._import_options import add_file_arguments, file_spec, get_task, progress


class Command(BaseCommand):
    help = (
        "Import contexts for a task's round from JSONL or CSV. All-or-nothing: a malformed row stops the import "
        "with its line number and nothing of the file is kept. Re-importing the same file adds nothing. "
        "Example: import_contexts nli 1 ../shared/data/anli/ANLI_analysis_r1_dev.csv --map premise=context --uid-from-content"
    )

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. nli, qa, sentiment, hate-speech.")
        parser.add_argument("round", type=int, help="Round number.")
        add_file_arguments(parser)
        parser.add_argument("--create-round", action="store_true", help="Create the round (closed) if it does not exist.")

    def handle(self, *args, **options):
        task = get_task(options["task"])
        try:
            result = import_contexts(
                task=task, round_number=options["round"], spec=file_spec(options),
                create_round=options["create_round"], progress=progress(options),
            )
        except RuleError as exc:
            raise CommandError(f"{options['file']}: {exc.message}") from None
        return result.summary()
