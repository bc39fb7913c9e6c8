"""Whose endpoint may go into an annotation loop: in a loop, annotators' texts go to the endpoint's
server under its owner's key, so another user's endpoint needs that owner's consent."""

from __future__ import annotations

from dynabench.errors import RuleError
from tasks.error_codes import TaskErrorCode


def check_loop_consent(task, models) -> None:
    """Raise ``RuleError`` ``endpoint_loop_not_allowed`` (400, field ``target_models``) for the first of
    ``models`` (``MLModel`` records of ``task``) that is an endpoint whose owner is neither an owner of
    ``task`` nor allowed loop use when submitting it (``Endpoint.loop_allowed``). Directory models and
    models without an owner (the platform's) pass."""
    for model in models:
        if not model.is_endpoint or model.owner is None or task.is_owner(model.owner):
            continue
        if not model.endpoint.loop_allowed:
            raise RuleError(
                TaskErrorCode.ENDPOINT_LOOP_NOT_ALLOWED,
                f"Model {model.name} is an endpoint submitted by {model.owner.get_username()}, who did not allow it in "
                "annotation loops: annotators' texts would go to their server under their key. Ask them to submit it "
                "with loop use allowed (loop_allowed), or choose another model.",
                field="target_models",
            )
