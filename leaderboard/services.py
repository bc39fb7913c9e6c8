"""Model submissions and the owner's actions on them: the rules every surface shares.

The HTMX pages, the REST API and the admin call these functions; they raise ``RuleError``
(400), ``NotAllowed`` (403) or ``RateLimited`` (429) with a message saying what to fix, and
on a refusal nothing is stored (no row, no file).

- :func:`submit_model_archive`: a zip or tar(.gz) of a Hugging Face directory. The request
  decompresses nothing: it refuses at once what costs nothing to read (the attempt rate, the
  upload's size, its format, a zip's central directory: paths, links, pickle or code files,
  declared sizes; the storage quota), stores the archive and answers. The job
  ``leaderboard.jobs.unpack_model`` (``leaderboard/unpacking.py``) reads it member by member
  against the unpacked-size limit, checks the model (``check_model_directory``) and writes its
  files, or sets the model ``failed`` with the reason.
- :func:`submit_predictions`: a JSONL prediction file covering every item of the task's
  scoring datasets (checked by ``leaderboard.predictions``).
- :func:`register_model_directory`: a task owner registers a directory already on the server.
- :func:`submit_endpoint`: a model behind an OpenAI-compatible endpoint (``tasks/loop/endpoints/``).
- :func:`set_model_visibility`: publish / anonymise (owner only).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RateLimited, RuleError
from dynabench.ratelimits import count_hit
from dynabench.roles import has_role
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.archives import (
    MiB,
    archive_kind,
    check_members,
    kept_bytes,
    max_archive_bytes,
    models_root,
    stage_upload,
    store_archive,
    zip_members,
)
from leaderboard.quota import check_storage_quota, lock_user, quota_left, storage_quota_bytes, storage_used_bytes  # noqa: F401
from leaderboard.queueing import enqueue_recompute, enqueue_selection_training, enqueue_unpack
from leaderboard.scheduling import schedule_evaluations, schedule_model
from leaderboard.models import LeaderboardConfig
from leaderboard.predictions import parse_predictions, require_scoring_items
from leaderboard.selectors import leaderboard_table, snapshot_provenance
from tasks import access
from tasks.loop import artefacts
from tasks.loop.model_checks import check_model_directory, directory_checksum
from tasks.models import Dataset, DatasetItem, MLModel, Task
from validation.transfer import on_models_changed as queue_transfer_of


def _setting(name: str, default):
    return getattr(settings, name, default)


def max_predictions_bytes() -> int:
    return int(_setting("PREDICTIONS_MAX_BYTES", 200 * MiB))


def daily_submission_limit() -> int:
    return int(_setting("MODEL_SUBMISSIONS_PER_DAY", 5))


UPLOAD_WINDOW_S = 3600


def upload_attempts_per_hour() -> int:
    """Submission attempts (uploads, predictions files, selections: accepted or refused) one user may
    make per clock hour on any surface (``settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR``, default 10; 0: no limit)."""
    return int(_setting("MODEL_UPLOAD_ATTEMPTS_PER_HOUR", 10))


def count_upload_attempt(user) -> None:
    """Count one submission attempt of ``user`` in this hour's window (``dynabench.ratelimits``, in the
    cache, so every web process and both surfaces, page and API, share it) and raise ``RateLimited``
    (``upload_rate``, 429) past ``upload_attempts_per_hour()``. Counted before the upload is looked
    at, so refused uploads count as much as accepted ones; superusers are not limited."""
    limit = upload_attempts_per_hour()
    if limit <= 0 or getattr(user, "is_superuser", False):
        return
    count, resets_in = count_hit(f"model-upload:{user.pk}", window_s=UPLOAD_WINDOW_S)
    if count > limit:
        raise RateLimited(
            Code.UPLOAD_RATE,
            f"Too many submissions: at most {limit} an hour, refused ones included. Try again in {resets_in // 60 + 1} "
            "minutes.",
        )


# --- shared checks -----------------------------------------------------------------------


SUBMISSION_NAMES = {"model": "a model", "predictions": "a predictions file", "selection": "a selection of pool items",
                    "endpoint": "an endpoint"}


@dataclass(frozen=True)
class Allowance:
    """A user's submissions in the last 24 hours against the daily limit (models, predictions and
    selections alike: each is scored on the task's hidden sets).

    ``limit``/``used``/``remaining`` are counts (``limit`` None: not limited, e.g. an admin);
    ``next_at`` is when the oldest counted submission stops counting (None when nothing counts).
    """

    limit: int | None
    used: int
    remaining: int | None
    next_at: datetime | None = None


def counted_submissions(user):
    """``user``'s models that count toward the daily limit: all they own, except endpoint models of
    tasks they own (an owner's endpoints for their task's loop, added in the console, are no
    submission: they never spend the allowance of the owner's own model uploads)."""
    owned_tasks = Task.objects.filter(owners=user).values("pk")
    return MLModel.objects.filter(owner=user).exclude(kind=MLModel.Kind.ENDPOINT, task__in=owned_tasks)


def submission_allowance(user) -> Allowance:
    """Return ``user``'s :class:`Allowance` now (over ``counted_submissions``). Superusers are not
    limited (``limit`` None)."""
    since = timezone.now() - timedelta(days=1)
    recent = counted_submissions(user).filter(created_at__gte=since)
    used = recent.count()
    oldest = recent.order_by("created_at").values_list("created_at", flat=True).first()
    next_at = oldest + timedelta(days=1) if oldest else None
    if user.is_superuser:
        return Allowance(limit=None, used=used, remaining=None, next_at=next_at)
    limit = daily_submission_limit()
    return Allowance(limit=limit, used=used, remaining=max(limit - used, 0), next_at=next_at)


def check_submitter(*, user, task: Task) -> None:
    """Raise unless ``user`` may submit models, predictions or selections to ``task`` at all.

    Rules: logged in (``NotAllowed`` ``not_owner``); in the ``researcher`` role
    (``dynabench.roles.has_role``: ticked at sign-up or given by an admin; superusers pass) or an
    owner of the task (``NotAllowed`` ``not_researcher``, 403). The daily limit is not checked here.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to submit a model.")
    if not (has_role(user, "researcher") or task.is_owner(user)):
        raise NotAllowed(
            Code.NOT_RESEARCHER,
            "Submitting models, predictions or selections needs the researcher role, which this account does not "
            "have. Sign up with 'Researcher' ticked, or ask an admin to add the role to your account.",
        )


def check_can_submit(*, user, task: Task, name: str, rate_limited: bool = True, submission: str = "model") -> str:
    """Return the cleaned model name, or raise when ``user`` may not submit to ``task`` now.

    Rules: ``check_submitter`` (logged in, researcher role or task owner); the task is active;
    the task's kind takes this ``submission`` (``model``, ``predictions`` or ``selection``: its
    spec's ``submissions``, else ``wrong_submission``); a name of 1–200 characters; at most
    ``settings.MODEL_SUBMISSIONS_PER_DAY`` submissions in the last 24 hours
    (``submission_allowance``; superusers are exempt, and so are platform scripts that pass
    ``rate_limited=False``), else ``RateLimited``.
    """
    check_submitter(user=user, task=task)
    if rate_limited:
        count_upload_attempt(user)
    if not task.active:
        raise RuleError(Code.NO_SCORING_DATASETS, f"The task '{task.code}' is not active; it takes no submissions.")
    if submission not in task.spec.submissions:
        takes = " or ".join(SUBMISSION_NAMES[s] for s in task.spec.submissions)
        raise RuleError(
            Code.WRONG_SUBMISSION, f"The task '{task.code}' takes {takes}, not {SUBMISSION_NAMES[submission]}.", field="upload"
        )
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the model a name of 1 to 200 characters.", field="name")
    allowance = submission_allowance(user)
    if rate_limited and allowance.remaining == 0:
        again = (f"You can submit again after {allowance.next_at:%Y-%m-%d %H:%M} UTC." if allowance.next_at
                 else "Ask an admin to raise it.")
        raise RateLimited(
            Code.DAILY_LIMIT,
            f"You have submitted {allowance.used} models in the last 24 hours, the daily limit is {allowance.limit}. {again}",
        )
    return name


def _enqueue_evaluation(model_id: int) -> None:
    """Queue the new model's evaluation runs (``scheduling.schedule_model``) once the transaction commits."""
    schedule_model(MLModel.objects.select_related("task").get(pk=model_id))


def submit_model_archive(
    *, user, task: Task, upload, name: str, description: str = "", anonymous: bool = False, published: bool = MLModel.PUBLISHED_BY_DEFAULT,
    rate_limited: bool = True,
) -> MLModel:
    """Store a model archive of ``task`` for ``user`` and queue the job that checks and unpacks it.

    The request decompresses nothing (listing a tar.gz's members means decompressing them: a few
    MB can declare gigabytes). It refuses at once only what costs nothing to read: the upload
    attempt rate and daily limit (``check_can_submit``), the upload's size
    (``MODEL_ARCHIVE_MAX_BYTES``, while it is copied), its format (``archive_kind``: a zip's end
    record or a tar's first header) and, for a zip, its central directory (``zip_members``,
    ``check_members``: paths, links, special files, pickles, code, weights present, declared
    unpacked size), then the owner's storage quota (``check_storage_quota``) for the bytes it
    reserves: a zip's declared kept bytes (``kept_bytes``), a tar's upload size (its unpacked size is
    known only once read). The quota is checked again and the model created under a lock on the
    owner's row, so two concurrent uploads cannot both pass.

    Returns the new ``MLModel`` (kind ``hf_directory``, status ``unpacking``, no ``path`` yet)
    whose archive is in the storage (``MLModel.archive``); the job
    ``leaderboard.jobs.unpack_model`` is enqueued when the transaction commits. It reads the archive
    member by member, stops at the first byte past the unpacked-size limit or the quota, checks the
    model (config, architecture, labels, tokenizer: ``check_model_directory``), writes the kept files
    to ``MEDIA_ROOT/models/<id>/``, sets ``queued`` and schedules the evaluation, or sets ``failed``
    with the reason (``leaderboard/unpacking.py``).

    Raises ``RateLimited`` (``upload_rate``, ``daily_limit``), ``RuleError`` with codes
    ``archive_too_big``, ``not_an_archive``, ``unsafe_path``, ``link_in_archive``,
    ``special_file_in_archive``, ``pickle_weights``, ``no_weights``, ``storage_quota`` (413). Nothing
    is stored when it raises.
    """
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited)
    root = models_root()
    archive_path = stage_upload(upload, max_bytes=max_archive_bytes(), what="archive", directory=root)
    stored = None
    try:
        archive_format = archive_kind(archive_path)
        if archive_format == "zip":
            members = zip_members(archive_path)
            check_members(members)
            reserved = kept_bytes(members)
        else:
            reserved = archive_path.stat().st_size
        check_storage_quota(user, reserved)  # before storing anything; again under the lock below
        stored = store_archive(archive_path, archive_format)
        with transaction.atomic():
            lock_user(user)
            check_storage_quota(user, reserved)
            model = MLModel.objects.create(
                task=task, owner=user, name=name, description=description or "", kind=MLModel.Kind.HF_DIRECTORY,
                published=published, anonymous=anonymous, status=MLModel.Status.UNPACKING, archive=stored,
                archive_kept_bytes=reserved,
            )
            model_id = model.pk
            transaction.on_commit(lambda: enqueue_unpack(model_id))
        return model
    except BaseException:
        if stored is not None:
            artefacts.storage().delete(stored)
        raise
    finally:
        archive_path.unlink(missing_ok=True)


def register_model_directory(
    *, actor, task: Task, path, name: str, description: str = "", owner=None, published: bool = MLModel.PUBLISHED_BY_DEFAULT,
    anonymous: bool = False,
) -> MLModel:
    """Register a model directory already on the server for ``task`` (task owners and admins).

    Published unless ``published`` is False, as every model added to a task is, whatever its kind
    (``MLModel.PUBLISHED_BY_DEFAULT``).

    The directory stays where it is; it is checked like an uploaded archive (safetensors,
    architecture, labels) and its evaluation is queued. Raises ``NotAllowed`` when ``actor``
    does not own the task, ``RuleError`` when the directory is refused.
    """
    if not task.is_owner(actor):
        raise NotAllowed(Code.NOT_OWNER, f"Only owners of the task '{task.code}' can register model directories.")
    if "model" not in task.spec.submissions:
        raise RuleError(Code.WRONG_SUBMISSION, f"The task '{task.code}' takes no model directories.", field="path")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the model a name of 1 to 200 characters.", field="name")
    folder = Path(path).expanduser()
    if not folder.is_absolute():
        raise RuleError(Code.BAD_DIRECTORY, f"Give the absolute path of the model directory (got '{path}').", field="path")
    check_model_directory(folder, task=task)
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=owner or actor, name=name, description=description or "", kind=MLModel.Kind.HF_DIRECTORY,
            path=str(folder.resolve()), checksum=directory_checksum(folder), published=published, anonymous=anonymous,
            status=MLModel.Status.QUEUED,
        )
        artefacts.publish(model)
        _enqueue_evaluation(model.pk)
    return model


# --- prediction files --------------------------------------------------------------------


def submit_predictions(
    *, user, task: Task, upload, name: str, description: str = "", anonymous: bool = False, published: bool = MLModel.PUBLISHED_BY_DEFAULT,
    rate_limited: bool = True,
) -> MLModel:
    """Check a JSONL predictions file against the task's scoring datasets, store it, queue its evaluation.

    Returns a new ``MLModel`` of kind ``predictions`` whose ``path`` is
    ``MEDIA_ROOT/models/<id>/predictions.jsonl`` (one normalised line per prediction:
    ``{"dataset", "uid", "label"|"answer"}``) and ``checksum`` its sha256. Raises
    ``RateLimited`` (daily limit), ``RuleError`` (``no_scoring_datasets``, ``bad_predictions``,
    ``incomplete_predictions``: each problem listed with line numbers). Nothing is stored when
    it raises.
    """
    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited, submission="predictions")
    datasets = require_scoring_items(task)
    root = models_root()
    staged = stage_upload(upload, max_bytes=max_predictions_bytes(), what="predictions file", directory=root)
    final_dir = None
    try:
        with open(staged, "rb") as fh:
            predictions = parse_predictions(task, fh, datasets=datasets)
        field = task.spec.prediction_field
        body = io.BytesIO()
        for (dataset, uid), value in predictions.items():
            body.write(json.dumps({"dataset": dataset, "uid": uid, field: value}, ensure_ascii=False).encode() + b"\n")
        data = body.getvalue()
        with transaction.atomic():
            model = MLModel.objects.create(
                task=task, owner=user, name=name, description=description or "", kind=MLModel.Kind.PREDICTIONS,
                published=published, anonymous=anonymous, status=MLModel.Status.QUEUED,
            )
            final_dir = root / str(model.pk)
            final_dir.mkdir(parents=True, exist_ok=True)
            path = final_dir / "predictions.jsonl"
            path.write_bytes(data)
            model.path = str(path)
            model.checksum = hashlib.sha256(data).hexdigest()
            model.save(update_fields=["path", "checksum"])
            artefacts.publish(model)
            _enqueue_evaluation(model.pk)
        return model
    except BaseException:
        if final_dir is not None:
            shutil.rmtree(final_dir, ignore_errors=True)
        raise
    finally:
        staged.unlink(missing_ok=True)


# --- endpoints ----------------------------------------------------------------------------------


def submit_endpoint(
    *, user, task: Task, name: str, base_url: str, model_name: str, api: str | None = None, params=None, prompt=None,
    api_key: str = "", timeout_s: float = 30.0, max_retries: int = 3, max_concurrency: int = 4, description: str = "",
    anonymous: bool = False, published: bool = MLModel.PUBLISHED_BY_DEFAULT, rate_limited: bool = True, loop_allowed: bool = False,
    consents=(),
) -> MLModel:
    """Submit a model behind an OpenAI-compatible endpoint instead of an archive; queue its evaluation.

    The connection is checked (``tasks.loop.endpoints.records.create_endpoint_model``: the URL against the admin's
    allow-list, no link-local, private or file URLs; parameters, prompt overrides, timeout, retries,
    concurrency) and ``api_key`` is stored encrypted, never shown back. A researcher cannot name an
    environment variable for the key (only the platform's admins and task owners set those, through
    the admin). Returns a new ``MLModel`` of kind ``endpoint`` (status ``queued``); the evaluation jobs
    send the scoring datasets' inputs (never their labels) within ``max_concurrency``. ``consents``
    (none by default; ``loop_allowed`` adds ``loop``): the purposes besides evaluation the submitter lets the
    task's owners call the endpoint for under this key (``tasks.loop.gate``: loop, assist, generate,
    transfer, judge); without one the gate refuses that use in a task the submitter does not own. Raises ``RateLimited`` (daily limit) and ``RuleError``
    (``wrong_submission``, ``endpoint_*`` codes).
    """
    from tasks.loop.endpoints.records import create_endpoint_model

    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited, submission="endpoint")
    with transaction.atomic():
        model = create_endpoint_model(
            task=task, owner=user, name=name, base_url=base_url, model_name=model_name, api=api, params=params,
            prompt=prompt, api_key=api_key, timeout_s=timeout_s, max_retries=max_retries, max_concurrency=max_concurrency,
            description=description or "", published=published, anonymous=anonymous, status=MLModel.Status.QUEUED,
            consents=[*consents, *(["loop"] if loop_allowed else [])],
        )
        _enqueue_evaluation(model.pk)
    return model


# --- data-centric selections ----------------------------------------------------------------


def check_selection_submission(*, user, task: Task, uids, name: str, rate_limited: bool = True) -> tuple[str, list, str]:
    """The checks of a selection submission, in order, storing nothing; return ``(name, uids, pool name)``.

    May ``user`` submit a selection to ``task`` (``check_can_submit``; ``rate_limited`` counts the
    daily allowance), the model name, the pool dataset, then the kind's ``check_selection`` (budget,
    repeats, uids outside the pool). ``submit_selection`` and its dry run
    (``leaderboard.preflight.check_selection``) both call it; raises what ``submit_selection`` documents.
    """
    from tasks.loop.training.records import check_model_name

    name = check_can_submit(user=user, task=task, name=name, rate_limited=rate_limited, submission="selection")
    name = check_model_name(task, name)
    pool_name = task.spec.training_pool(task.config)
    pool = Dataset.objects.filter(task=task, name=pool_name).first()
    if pool is None:
        raise RuleError(Code.NO_POOL, f"The task '{task.code}' has no pool dataset '{pool_name}' yet; ask its owner.")
    pool_uids = set(DatasetItem.objects.filter(dataset=pool).values_list("uid", flat=True))
    return name, task.spec.check_selection(task.config, uids, pool_uids), pool_name


def submit_selection(
    *, user, task: Task, uids, name: str, description: str = "", anonymous: bool = False, published: bool = MLModel.PUBLISHED_BY_DEFAULT,
    rate_limited: bool = True,
) -> MLModel:
    """Submit a training-set selection to a data-centric task; queue its training, then its evaluation.

    ``uids``: the chosen uids of the task's candidate pool (``task.spec.training_pool``), at
    most the task's budget (``task.spec.check_selection``). ``name`` becomes the trained
    model's directory, so it is a slug unique in the task. Returns a new ``MLModel`` (status
    ``training``) whose ``training_info["selection"]`` holds the uids; the RQ job
    ``leaderboard.jobs.train_selection`` trains the task's fixed recipe on exactly them with
    its fixed seed (``tasks.loop.training.runs.train_selection``) and queues the evaluation on the
    scoring datasets, so the leaderboard ranks the selections.

    Raises ``RateLimited`` (daily limit) and ``RuleError``: ``wrong_submission`` (the task
    takes no selections), ``no_pool`` (its pool dataset is missing), ``bad_selection`` naming
    the first offender (not a list, over the budget, a repeated uid, a uid not in the pool),
    ``bad_model_name`` / ``model_name_taken``. Nothing is stored when it raises.
    """
    from tasks.loop.training.records import model_directory

    name, uids, pool_name = check_selection_submission(user=user, task=task, uids=uids, name=name, rate_limited=rate_limited)
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=user, name=name, description=description or f"Selection of {len(uids)} items of {pool_name}.",
            kind=MLModel.Kind.HF_DIRECTORY, path=str(model_directory(task, name)), published=published,
            anonymous=anonymous, status=MLModel.Status.TRAINING, training_info={"selection": uids},
        )
        model_id = model.pk
        transaction.on_commit(lambda: enqueue_selection_training(model_id))
    return model


# --- the owner's actions -----------------------------------------------------------------


def set_model_visibility(*, actor, model: MLModel, published: bool | None = None, anonymous: bool | None = None) -> MLModel:
    """Publish/unpublish or anonymise/de-anonymise ``model`` (its owner, or an admin).

    Raises ``NotAllowed`` for anyone else. The task's leaderboard is recomputed on commit; a model
    published now joins the transfer measurements (``validation.transfer``: they count published models only).
    """
    if not access.owns_model(actor, model):
        raise NotAllowed(Code.NOT_OWNER, "Only the model's owner can change how it is shown.")
    fields = []
    if published is not None:
        model.published = bool(published)
        fields.append("published")
    if anonymous is not None:
        model.anonymous = bool(anonymous)
        fields.append("anonymous")
    if fields:
        with transaction.atomic():
            model.save(update_fields=[*fields, "updated_at"])
            task_id = model.task_id
            if model.published:
                schedule_evaluations(model.task, models=[model])
                queue_transfer_of(MLModel, task=model.task, models=[model])
            transaction.on_commit(lambda: enqueue_recompute(task_id))
    return model


# --- leaderboard configs: forks and frozen snapshots --------------------------------------


def save_leaderboard_config(
    *, user, task: Task, name: str, metric_weights: dict, dataset_weights: dict,
    missing_metric: str = "drop_metric", description: str = "", frozen: bool = False,
):
    """Save a weight set ("fork") of ``task``'s leaderboard, or a frozen snapshot of its ranking.

    Any logged-in user may save one; it is shared by the URL of its ``slug``. A frozen
    snapshot stores the ranked rows as they are now and never changes. ``missing_metric`` is
    stored in its own field (``drop_metric`` or ``exclude_model``). Raises ``NotAllowed`` for
    anonymous users, ``RuleError`` for a missing name, bad weights or an unknown missing-metric
    choice.
    """
    if not getattr(user, "is_authenticated", False):
        raise NotAllowed(Code.NOT_OWNER, "Log in to save a leaderboard.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise RuleError(Code.BAD_NAME, "Give the saved leaderboard a name of 1 to 200 characters.", field="name")
    table = leaderboard_table(task, metric_weights=metric_weights, dataset_weights=dataset_weights, missing_metric=missing_metric)
    config = LeaderboardConfig.objects.create(
        task=task, owner=user, name=name, description=description or "",
        metric_weights=dict(table.metric_weights), dataset_weights=table.dataset_weights,
        missing_metric=table.missing_metric, frozen=frozen,
        snapshot=({"rows": table.snapshot(), "datasets": table.datasets, "rules": table.rules,
                   "pending": [p["name"] for p in table.pending],
                   "provenance": snapshot_provenance(task, [r.model_id for r in table.rows])} if frozen else []),
    )
    return config
