"""State changes on tasks and their models, shared by the admin, owner pages, the API and jobs.

Each function takes keyword-only arguments, checks the actor, and applies its change in
one transaction.
"""

import uuid

from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RuleError
from tasks.models import MLModel, Task


@transaction.atomic
def request_retraining(*, task: Task, acting_user, name: str | None = None, epochs: int | None = None) -> MLModel:
    """Create a new target-model record of ``task`` (status ``training``) and enqueue its training.

    The RQ job (``tasks.jobs.retrain_from_validated`` on the ``training`` queue, enqueued when
    the transaction commits) trains MiniLM on the task's validated examples plus the seed set
    and fills in the record. ``name`` (a slug, unique in the task) defaults to
    ``minilm-retrained-<timestamp>``; ``epochs`` overrides the default number of epochs.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin);
    ``RuleError`` when the task has no validated example yet or the name is bad or taken.
    """
    from annotation.models import Example, ValidationState
    from tasks import jobs, training

    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"Only owners of {task.code} may retrain its target model.")
    validated = Example.objects.filter(
        round__task=task, validation_state=ValidationState.VERIFIED_CORRECT, retracted=False
    ).count()
    if not validated:
        raise RuleError(
            "no_validated_examples",
            f"Task {task.code} has no example validated as correct yet; retraining would only repeat the seed model.",
        )
    if epochs is not None and not 1 <= epochs <= 100:
        raise RuleError("bad_epochs", "epochs must be between 1 and 100.", field="epochs")
    name = training.check_model_name(task, name or jobs.retraining_name())
    job_id = f"retrain-{task.code}-{uuid.uuid4().hex}"
    ml_model = MLModel.objects.create(
        task=task, owner=acting_user, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(training.model_directory(task, name)),
        description=f"MiniLM retrained for {task.name} on {validated} validated examples plus the seed set.",
        training_info={"job_id": job_id, "requested_by": acting_user.pk, "requested_at": timezone.now().isoformat(),
                       "validated_at_request": validated},
    )
    transaction.on_commit(lambda: jobs.enqueue_retraining(task.pk, model_id=ml_model.pk, job_id=job_id, epochs=epochs))
    return ml_model
