"""``manage.py evaluate_model ID [--inline]``: (re)evaluate a model on every dataset of its task."""

from django.core.management.base import BaseCommand

from leaderboard.jobs import evaluate_model, evaluate_run, recompute_leaderboard
from leaderboard.queueing import enqueue_evaluation
from leaderboard.models import EvaluationRun
from tasks.models import MLModel


class Command(BaseCommand):
    help = "Queue the evaluation of a model (or run it here with --inline)."

    def add_arguments(self, parser):
        parser.add_argument("model_id", type=int)
        parser.add_argument("--inline", action="store_true", help="Run every job in this process instead of the queue.")

    def handle(self, *args, model_id, inline, **options):
        model = MLModel.objects.get(pk=model_id)
        if not inline:
            enqueue_evaluation(model.pk)
            return f"model {model.pk}: evaluation queued on 'evaluation'"
        lines = [evaluate_model(model.pk, enqueue=False)]
        for run in EvaluationRun.objects.filter(model=model, status="queued").order_by("pk"):
            lines.append(evaluate_run(run.pk))
        lines.append(recompute_leaderboard(model.task_id))
        return "\n".join(lines)
