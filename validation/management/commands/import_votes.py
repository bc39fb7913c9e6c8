from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks.models import Round, Task
from validation.imports import FORMATS, import_votes


class Command(BaseCommand):
    help = (
        "Import existing validation votes into a round: DynaSent label_distribution (5 workers per "
        "sentence) or ANLI verifier labels (with --examples ANLI_analysis_rN_dev.csv)."
    )

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. sentiment or nli.")
        parser.add_argument("round", type=int, help="Round number (created if missing with --create-round).")
        parser.add_argument("file", help="DynaSent JSONL, or ANLI verifier_labels_R1-3.jsonl.")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, required=True)
        parser.add_argument("--examples", help="ANLI: the ANLI_analysis_rN_dev.csv that holds the examples.")
        parser.add_argument("--limit", type=int, help="Read at most this many rows (examples file for ANLI).")
        parser.add_argument("--create-round", action="store_true", help="Create the round if the task does not have it.")

    def handle(self, *args, **o):
        task = Task.objects.filter(code=o["task"]).first()
        if task is None:
            raise CommandError(f"No task '{o['task']}'. Known: {', '.join(Task.objects.values_list('code', flat=True))}.")
        round = Round.objects.filter(task=task, number=o["round"]).first()
        if round is None:
            if not o["create_round"]:
                raise CommandError(f"{task.code} has no round {o['round']}; pass --create-round to create it.")
            round = Round.objects.create(task=task, number=o["round"])
        try:
            report = import_votes(round=round, path=o["file"], fmt=o["fmt"], examples_path=o["examples"], limit=o["limit"])
        except RuleError as exc:
            raise CommandError(exc.message) from None
        return report.summary()
