"""Retraining the target model from the validated examples: an owner asks, a job trains.

``request_retraining`` creates the model record and queues ``validation.jobs.retrain_from_validated``;
``validation.round_close.close_round(next_loop="retrained")`` asks for it when it opens the next round.
"""

import uuid

from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RuleError
from tasks.loop.training import records as training
from tasks.models import MLModel, Round, Task
from validation import selectors
from validation.jobs import enqueue_retraining, retraining_name


@transaction.atomic
def request_retraining(
    *, task: Task, acting_user, name: str | None = None, epochs: int | None = None, loop_of_round: Round | None = None
) -> MLModel:
    """Create a new target-model record of ``task`` (status ``training``) and enqueue its training.

    The RQ job (``validation.jobs.retrain_from_validated`` on the ``training`` queue, enqueued when
    the transaction commits) trains MiniLM on the task's validated examples plus the seed set
    and fills in the record. ``name`` (a slug, unique in the task) defaults to
    ``minilm-retrained-<timestamp>``; ``epochs`` overrides the default number of epochs.
    ``loop_of_round``: an open round whose loop the model takes once trained
    (``validation.jobs.retrain_from_validated``). Once trained, the model is scored on every dataset
    of the task (``tasks.loop.training`` sends ``leaderboard_inputs_changed``).

    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin);
    ``RuleError`` when the task has no validated example yet or the name is bad or taken.
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"Only owners of {task.code} may retrain its target model.")
    validated = selectors.validated_queryset(task=task).count()
    if not validated:
        raise RuleError(
            "no_validated_examples",
            f"Task {task.code} has no example validated as correct yet; retraining would only repeat the seed model.",
        )
    if epochs is not None and not 1 <= epochs <= 100:
        raise RuleError("bad_epochs", "epochs must be between 1 and 100.", field="epochs")
    name = training.check_model_name(task, name or retraining_name())
    job_id = f"retrain-{task.code}-{uuid.uuid4().hex}"
    ml_model = MLModel.objects.create(
        task=task, owner=acting_user, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(training.model_directory(task, name)),
        description=f"MiniLM retrained for {task.name} on {validated} validated examples plus the seed set.",
        training_info={"job_id": job_id, "requested_by": acting_user.pk, "requested_at": timezone.now().isoformat(),
                       "validated_at_request": validated,
                       **({"loop_of_round": loop_of_round.pk} if loop_of_round is not None else {})},
    )
    transaction.on_commit(lambda: enqueue_retraining(task.pk, model_id=ml_model.pk, job_id=job_id, epochs=epochs))
    return ml_model
