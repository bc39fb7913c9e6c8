"""Task proposals: any signed-in user proposes a task, an admin approves it, sends it back or
rejects it. One set of functions for the pages, the admin and the tests:

1. ``submit_proposal`` / ``revise_proposal`` (the proposer): rate-limited
   (``dynabench.ratelimits``, ``settings.TASK_PROPOSALS_PER_DAY``, default 5 stored a day, revisions
   included; a refused form is not counted), the definition file parsed and checked against its kind's schema with
   line-numbered problems (``tasks.data.definitions``) before anything is stored.
2. ``decide_proposal`` (a reviewer: an admin, ``can_review``; task owners are staff but not reviewers): ``approve`` creates the task with ``tasks.data.seed.create_task``,
   the function ``manage.py create_task`` runs, makes the proposer its owner
   (``tasks.services.add_task_owner``) and hands the first dataset file, if any, to the console's
   uploads (``tasks.data.uploads.store_upload``: the new owner maps its columns); ``changes`` sends it
   back with a message; ``reject`` ends it. All in one transaction; the proposer's notification is
   queued on commit (``community.jobs.notify_proposal_decided``).
"""

from __future__ import annotations

import django_rq
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from community.error_codes import CommunityErrorCode as Code
from community.models import TaskProposal
from dynabench.errors import FieldErrors, NotAllowed, RateLimited, RuleError
from dynabench.jsonbounds import refused_character
from dynabench.ratelimits import count_hit, hits
from tasks.data.definitions import (
    MAX_DEFINITION_BYTES,
    DefinitionProblems,
    check_definition,
    parse_definition,
)
from tasks.kinds import KINDS
from tasks.models import Dataset, Task, Upload
from tasks.data.seed import create_task
from tasks.services import add_task_owner, round_gaps
from tasks.data.uploads import store_upload

DECISIONS = {"approve": TaskProposal.Status.APPROVED, "changes": TaskProposal.Status.CHANGES_REQUESTED,
             "reject": TaskProposal.Status.REJECTED}
_DAY_S = 24 * 3600
FORM_CONFIG_KEYS = {"labels": "labels", "license": "license"}
"""Config keys the form sets, and the form field each one's problems are reported on."""


def can_review(user) -> bool:
    """Whether ``user`` may decide proposals: admins (superusers) only. Task owners are staff too (for
    their own tasks' admin pages), so staff alone is not enough."""
    return bool(getattr(user, "is_authenticated", False) and user.is_active and user.is_superuser)


def _check_rate(user) -> None:
    """Refuse (``RateLimited``) once ``user`` stored ``TASK_PROPOSALS_PER_DAY`` proposals or revisions
    in this day's window; a refused form (a definition with problems) is not counted (``_count``)."""
    limit = int(getattr(settings, "TASK_PROPOSALS_PER_DAY", 5))
    if limit <= 0:
        return
    count, wait = hits(f"task-proposal:user:{user.pk}", window_s=_DAY_S)
    if count >= limit:
        raise RateLimited(Code.PROPOSALS_RATE_LIMITED,
                          f"At most {limit} task proposals or revisions a day; try again in {wait // 3600 + 1} hours.")


def _count(user) -> None:
    count_hit(f"task-proposal:user:{user.pk}", window_s=_DAY_S)


def build_definition(*, fields: dict, definition_text: str) -> tuple[dict, str]:
    """Return ``(definition, definition_text)``: the uploaded definition with the form's ``code``,
    ``name``, ``kind``, ``instructions``, ``labels`` (a list; empty: the file's) and ``license`` set in
    it, checked against the kind's schema. Raises ``FieldErrors`` (``invalid_proposal``) with every
    problem: form fields by name, the file's problems as ``definition: line N: ...``."""
    errors: dict[str, list[str]] = {}
    for name in ("code", "name", "kind", "instructions", "license"):
        text = str(fields.get(name) or "")
        bad = refused_character(text)
        if bad:
            errors[name] = [f"The text holds {bad}."]
    labels = [str(label) for label in fields.get("labels") or []]
    if any(refused_character(label) for label in labels):
        errors["labels"] = ["A label holds a character that cannot be stored."]
    code = str(fields.get("code") or "")
    if slugify(code) != code or not code:
        errors["code"] = [f"Use lower-case letters, digits and hyphens, e.g. '{slugify(code) or 'my-task'}'."]
    elif Task.objects.filter(code=code).exists():
        errors["code"] = [f"A task '{code}' exists already; choose another code."]
    if fields.get("kind") not in KINDS:
        errors["kind"] = [f"Choose one of {', '.join(KINDS)}."]
    try:
        definition = parse_definition(definition_text)
    except DefinitionProblems as problems:
        errors["definition"] = problems.problems
        raise FieldErrors(Code.INVALID_PROPOSAL, errors) from None
    if errors:
        raise FieldErrors(Code.INVALID_PROPOSAL, errors)
    config = dict(definition["config"]) if isinstance(definition["config"], dict) else definition["config"]
    if isinstance(config, dict):
        if labels:
            config["labels"] = labels
        if fields.get("license"):
            config["license"] = str(fields["license"])
    definition = {**definition, "code": code, "name": str(fields["name"]), "kind": fields["kind"],
                  "instructions": str(fields.get("instructions") or ""), "config": config}
    problems = check_definition(definition, definition_text, form_keys=FORM_CONFIG_KEYS)
    for problem in problems:
        field = next((f for f in FORM_CONFIG_KEYS.values() if problem.startswith(f"{f}: ")), None)
        if field:
            errors.setdefault(field, []).append(problem.split(": ", 1)[1])
        elif problem.startswith("kind: "):
            errors.setdefault("kind", []).append(problem.split(": ", 1)[1])
        else:
            errors.setdefault("definition", []).append(problem)
    if errors:
        raise FieldErrors(Code.INVALID_PROPOSAL, errors)
    return definition, definition_text


def _read_definition(file) -> str:
    if file is None:
        raise FieldErrors(Code.INVALID_PROPOSAL, {"definition": ["Upload a task definition file (.json), as manage.py create_task takes."]})
    raw = file.read(MAX_DEFINITION_BYTES + 1)
    if len(raw) > MAX_DEFINITION_BYTES:
        raise FieldErrors(Code.INVALID_PROPOSAL, {"definition": [f"line 1: the file is larger than {MAX_DEFINITION_BYTES:,} bytes"]})
    try:
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise FieldErrors(Code.INVALID_PROPOSAL, {"definition": [f"line {line}: the file is not UTF-8 text"]}) from None


def _keep_dataset(proposal: TaskProposal, dataset_file) -> None:
    if dataset_file is None:
        return
    name = str(dataset_file.name).rsplit("/", 1)[-1][:255]
    if not name.lower().endswith((".csv", ".jsonl", ".ndjson", ".json")):
        raise FieldErrors(Code.INVALID_PROPOSAL, {"dataset": [f"'{name}' is not a .csv or .jsonl file."]})
    if getattr(dataset_file, "size", 0) > settings.CONSOLE_UPLOAD_MAX_BYTES:
        raise FieldErrors(Code.INVALID_PROPOSAL, {"dataset": [f"'{name}' is larger than {settings.CONSOLE_UPLOAD_MAX_BYTES:,} bytes."]},
                          status_code=413)
    if proposal.dataset_file:
        proposal.dataset_file.delete(save=False)
    proposal.dataset_file.save(f"proposal-{proposal.pk}-{slugify(name.rsplit('.', 1)[0])[:40] or 'data'}.{name.rsplit('.', 1)[-1].lower()}",
                               dataset_file, save=False)
    proposal.dataset_name = name


def submit_proposal(*, proposer, fields: dict, definition_file, dataset_file=None) -> TaskProposal:
    """Store a new proposal from ``proposer`` (signed in); ``fields``: ``code``, ``name``, ``kind``,
    ``instructions`` (Markdown), ``labels`` (list), ``license``. Raises ``FieldErrors`` naming each
    field at fault (the definition's problems by line), ``RateLimited`` past the daily limit."""
    if not getattr(proposer, "is_authenticated", False):
        raise NotAllowed(Code.NOT_PROPOSER, "Sign in to propose a task.")
    _check_rate(proposer)
    definition, text = build_definition(fields=fields, definition_text=_read_definition(definition_file))
    with transaction.atomic():
        proposal = TaskProposal.objects.create(
            proposer=proposer, code=definition["code"], name=definition["name"], kind=definition["kind"],
            instructions=definition["instructions"], license=str(fields.get("license") or ""), definition=definition,
            definition_text=text,
        )
        if dataset_file is not None:
            _keep_dataset(proposal, dataset_file)
            proposal.save(update_fields=["dataset_file", "dataset_name"])
    _count(proposer)
    return proposal


def revise_proposal(*, proposal: TaskProposal, proposer, fields: dict, definition_file=None, dataset_file=None) -> TaskProposal:
    """The proposer's new version of a proposal sent back for changes; it waits for review again.
    Without a new definition file the stored one is checked with the new form values. Raises
    ``NotAllowed`` for anyone but the proposer, ``RuleError`` (409) unless changes were requested."""
    if proposal.proposer_id != getattr(proposer, "pk", None):
        raise NotAllowed(Code.NOT_PROPOSER, "Only the person who proposed this task can revise it.")
    if proposal.status != TaskProposal.Status.CHANGES_REQUESTED:
        raise RuleError(Code.NOT_REVISABLE, "Only a proposal sent back for changes can be revised.", status_code=409)
    _check_rate(proposer)
    text = _read_definition(definition_file) if definition_file is not None else proposal.definition_text
    definition, text = build_definition(fields=fields, definition_text=text)
    with transaction.atomic():
        locked = TaskProposal.objects.select_for_update().get(pk=proposal.pk)
        if locked.status != TaskProposal.Status.CHANGES_REQUESTED:
            raise RuleError(Code.NOT_REVISABLE, "Only a proposal sent back for changes can be revised.", status_code=409)
        locked.code, locked.name, locked.kind = definition["code"], definition["name"], definition["kind"]
        locked.instructions, locked.license = definition["instructions"], str(fields.get("license") or "")
        locked.definition, locked.definition_text = definition, text
        locked.status, locked.revision = TaskProposal.Status.PENDING, locked.revision + 1
        if dataset_file is not None:
            _keep_dataset(locked, dataset_file)
        locked.save()
    _count(proposer)
    return locked


def decide_proposal(*, proposal: TaskProposal, reviewer, decision: str, message: str = "") -> TaskProposal:
    """Approve (``approve``), send back (``changes``, a ``message`` required) or reject (``reject``) a
    proposal waiting for review, as ``reviewer`` (``can_review``).

    Approval creates the task through ``tasks.data.seed.create_task`` (round 1 open for a collecting
    task), makes the proposer its owner and keeps the first dataset file as an upload waiting for
    its column mapping on the console. Raises ``NotAllowed`` (403), ``RuleError``: decided already
    (409), a task with the code exists (409), a message missing; the decision and the task are
    written together or not at all. The proposer is notified by a job once it commits.
    """
    if not can_review(reviewer):
        raise NotAllowed(Code.NOT_REVIEWER, "Only admins review task proposals.")
    if decision not in DECISIONS:
        raise RuleError(Code.INVALID_PROPOSAL, f"Decide one of {', '.join(DECISIONS)}.", field="decision")
    message = (message or "").strip()
    if decision == "changes" and not message:
        raise RuleError(Code.MESSAGE_REQUIRED, "Say what should change.", field="message")
    if refused_character(message):
        raise RuleError(Code.INVALID_PROPOSAL, f"The message holds {refused_character(message)}.", field="message")
    with transaction.atomic():
        locked = TaskProposal.objects.select_for_update().select_related("proposer").get(pk=proposal.pk)
        if locked.status != TaskProposal.Status.PENDING:
            raise RuleError(Code.ALREADY_DECIDED, f"This proposal is {locked.get_status_display().lower()} already.", status_code=409)
        if decision == "approve":
            locked.task = _create(locked, reviewer)
        locked.status = DECISIONS[decision]
        locked.review_message, locked.reviewed_by, locked.decided_at = message, reviewer, timezone.now()
        locked.save()
        transaction.on_commit(lambda: django_rq.get_queue("default").enqueue(
            "community.jobs.notify_proposal_decided", locked.pk, locked.status, locked.revision))
    return locked


def _create(proposal: TaskProposal, reviewer) -> Task:
    if Task.objects.filter(code=proposal.code).exists():
        raise RuleError(Code.CODE_TAKEN, f"A task '{proposal.code}' exists already: ask the proposer for another code.",
                        status_code=409)
    try:
        task, _ = create_task(proposal.definition)
    except (ValidationError, KeyError, TypeError) as error:
        detail = "; ".join(error.messages) if isinstance(error, ValidationError) else str(error)
        raise RuleError(Code.INVALID_PROPOSAL, f"The definition no longer makes a task: {detail}") from None
    add_task_owner(task=task, user=proposal.proposer, acting_user=reviewer)
    if proposal.dataset_file:
        with proposal.dataset_file.open("rb") as stored:
            upload = ContentFile(stored.read(), name=proposal.dataset_name or proposal.dataset_file.name)
        store_upload(task=task, acting_user=proposal.proposer, file=upload, target="dataset",
                     options={"name": f"{task.code}-first", "split": "", "access": "scoring"})
    return task


def approval_summary(task: Task) -> str:
    """What an approved proposal's task has and what its new owner must add, in sentences (the
    notification the proposer gets). From the task as it stands: a collecting task's open round,
    its active contexts and models in the loop (``tasks.services.round_gaps`` names what it still
    lacks: a model, contexts); a dataset file waiting for its column mapping; an evaluation-only
    task without scoring datasets."""
    said = []
    waiting = task.uploads.filter(status=Upload.Status.MAPPING).count()
    if waiting:
        said.append("Your dataset file waits for its column mapping on the console (Contexts & datasets).")
    round = task.current_round() if task.collecting else None
    if round is not None and round.status == round.Status.OPEN:
        contexts = round.contexts.filter(active=True).count()
        models = round.target_models.count()
        gaps = round_gaps(round)
        ready = f"Round {round.number} is open with {contexts} context{'s' if contexts != 1 else ''}"
        ready += f" and {models} model{'s' if models != 1 else ''} in the loop." if models else "."
        said.append(ready)
        if gaps:
            said.append("Before annotators can write, it needs: " + " ".join(gaps)
                        + " Add a model on the console's Rounds page (an endpoint model there, or upload or train a model directory).")
        else:
            said.append("Annotators can write now.")
    elif task.collecting:
        said.append("It has no open round: open one on the console's Rounds page.")
    elif not task.datasets.filter(access=Dataset.Access.SCORING).exists():
        said.append("It is an evaluation-only benchmark with no scoring dataset yet: upload one on the console "
                    "(Contexts & datasets) before models can be ranked.")
    return " ".join(said)


def proposals_of(user):
    """``user``'s proposals, newest first."""
    return TaskProposal.objects.filter(proposer=user).select_related("task")


def review_queue():
    """Proposals waiting for review, oldest first (the reviewers' queue)."""
    return TaskProposal.objects.filter(status=TaskProposal.Status.PENDING).select_related("proposer").order_by("created_at", "pk")
