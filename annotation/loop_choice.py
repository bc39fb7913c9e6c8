"""Which model in the loop answers the next example of a round, and whether one can.

The candidates are the round's target models that answer (model directories and endpoints);
a model still training waits (``ModelNotReady``), an endpoint whose circuit breaker is open
steps aside while another can answer, and with several the round's ``loop_rule`` picks one
(round-robin, or the least fooled so far). Asking the chosen model is
``annotation/model_answer.py``.
"""

from django.db.models import Count, Q

from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench import hotsql
from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_open_for
from tasks.loop.training.records import model_ready
from tasks.models import MLModel, Round

def _loop_models_sql() -> str:
    """The round's target models that answer (directories and endpoints), by id (every example asks for them)."""
    m, t = MLModel, Round.target_models.through
    return (
        f"SELECT {hotsql.select_list(m)} FROM {hotsql.table(m)} INNER JOIN {hotsql.table(t)} ON {hotsql.qualified(t, 'mlmodel')} = "
        f"{hotsql.qualified(m, 'id')} WHERE {hotsql.qualified(t, 'round')} = %s "
        f"AND {hotsql.qualified(m, 'kind')} IN (%s, %s) ORDER BY {hotsql.qualified(m, 'id')}"
    )


def model_in_loop(round: Round) -> MLModel:
    """Return the model in the loop that answers the next example of ``round``.

    The candidates are the round's target models that are model directories or endpoints
    (``tasks/loop/endpoints/``; one whose circuit breaker is open is left out while another can
    answer). With one, it answers. With several, the round's ``loop_rule`` (chosen by the owner, ``Round.LoopRule``)
    decides, from one aggregate over the round's examples per model:

    - ``round_robin``: the model that has answered the fewest examples of the round so far
      (retracted ones included), so the models take turns; ties go to the lowest id;
    - ``least_fooled``: the model with the lowest fooling rate so far (fooled / answered,
      retracted examples left out; a model with none yet counts as 0), ties to the fewest
      answered, then the lowest id, so the strongest model faces the next annotator.

    Only models that can answer count (``tasks.loop.training.model_ready``): a model still in
    training (the default models on a first ``make run``) waits. Raises ``RuleError``
    ``no_model_in_loop`` when the round has none, and ``ModelNotReady`` (``model_in_training``,
    409, with the record for its progress) when none of them is ready yet.
    """
    sql = hotsql.statement("annotation.loop_models", _loop_models_sql)
    kinds = [MLModel.Kind.HF_DIRECTORY, MLModel.Kind.ENDPOINT]
    models = [model for (model,) in hotsql.fetch_instances(sql, [round.pk, *kinds], MLModel)]
    if not models:
        raise RuleError(
            Code.NO_MODEL_IN_LOOP,
            f"Round {round.number} of {round.task.name} has no model in the loop, so examples cannot be "
            "checked yet. A task owner must add a target model to the round.",
            status_code=409,
        )
    ready = [m for m in models if model_ready(m)]
    if not ready:
        raise ModelNotReady(models[0])
    # An endpoint whose circuit breaker is open is out of rotation while another model can answer;
    # when none can, it stays the choice and the call is refused with the reason (``model_answer.ask_model``).
    if len(ready) > 1:
        ready = [m for m in ready if not (m.is_endpoint and breaker_open_for(m) > 0)] or ready
    models = ready
    if len(models) == 1:
        return models[0]
    rows = (
        Example.objects.filter(round=round, model__in=models)
        .values("model_id")
        .annotate(
            answered=Count("id"),
            kept=Count("id", filter=Q(retracted=False)),
            fooled=Count("id", filter=Q(retracted=False, model_wrong=True)),
        )
        .order_by()
    )
    stats = {row["model_id"]: row for row in rows}
    empty = {"answered": 0, "kept": 0, "fooled": 0}

    def answered(model):
        return stats.get(model.pk, empty)["answered"]

    if round.loop_rule == Round.LoopRule.LEAST_FOOLED:
        def fooling_rate(model):
            row = stats.get(model.pk, empty)
            return row["fooled"] / row["kept"] if row["kept"] else 0.0

        return min(models, key=lambda m: (fooling_rate(m), answered(m), m.pk))
    return min(models, key=lambda m: (answered(m), m.pk))


class ModelNotReady(RuleError):
    """The round's model in the loop is still training (or its first training failed): HTTP 409.

    ``model`` is the record, so a page can show its progress. Every surface that writes or tries
    examples gets it from ``model_in_loop``: nothing can be checked against a model that has no
    weights yet.
    """

    def __init__(self, model: MLModel):
        self.model = model
        if model.status == MLModel.Status.TRAINING:
            progress = f"{model.progress:.0%} done" if model.progress > 0 else "waiting for a worker to start it"
            message = (
                f"The model in the loop ({model.name}) is still training ({progress}), so examples cannot be "
                "checked against it yet. Writing opens by itself as soon as it is ready; this usually takes a few minutes."
            )
        else:
            message = (
                f"The model in the loop ({model.name}) failed to train, so examples cannot be checked yet: "
                f"{model.failure_reason or 'no reason recorded'}. A task owner must retrain it or put another model in the loop."
            )
        super().__init__(Code.MODEL_IN_TRAINING, message, status_code=409)


def loop_notice(model: MLModel) -> str:
    """A notice for the create page when ``model`` (``model_in_loop``'s choice) is an endpoint taken out
    of rotation (its circuit breaker is open), else ''. Writing stays open; submitting is refused until it answers."""
    wait = breaker_open_for(model) if model.is_endpoint else 0.0
    if wait <= 0:
        return ""
    return (f"The model in the loop ({model.name}) is not answering right now; the platform tries it again in "
            f"{wait:.0f} s. You can write your example meanwhile: submitting works once it answers, and your text stays in the form.")
