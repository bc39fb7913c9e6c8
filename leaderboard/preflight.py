"""Dry runs of submissions: the server's own checks of a predictions file or a model archive, storing nothing.

``dynabench check`` (and every ``dynabench submit``) asks these before the real upload, so a file
that would be refused is refused in a second, with the same line-numbered problems a real
submission answers: the checks are the very functions the submission services call
(``leaderboard.predictions.parse_predictions``; ``leaderboard.archives.list_archive``,
``check_members``, ``write_skeleton`` and ``tasks.model_checks.check_model_directory``), never a
copy. Nothing is written but a staged temporary file, removed before the answer; no model row,
no artefact, no job, and the daily submission allowance is not spent.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONTooDeep, loads_bounded
from leaderboard.archives import (
    check_members,
    is_weights,
    kept_files,
    list_archive,
    max_archive_bytes,
    models_root,
    stage_upload,
    write_skeleton,
)
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.predictions import parse_predictions, require_scoring_items
from leaderboard.services import check_can_submit, check_storage_quota, max_predictions_bytes
from tasks.model_checks import check_model_directory
from tasks.models import Task

#: The name a dry run checks when the caller gives none (names are checked like a submission's).
DRY_RUN_NAME = "preflight"


@dataclass(frozen=True)
class PredictionsCheck:
    """A predictions file that a submission would accept: ``predictions`` lines kept, per dataset name."""

    predictions: int
    datasets: dict[str, int]


@dataclass(frozen=True)
class ArchiveCheck:
    """A model archive that a submission would accept: its kept files and their unpacked bytes."""

    files: list[str]
    kept_bytes: int


def check_predictions(*, user, task: Task, upload, name: str = "") -> PredictionsCheck:
    """Run a predictions submission's checks on ``upload`` (a file object or Django upload) and store nothing.

    The same rules as ``leaderboard.services.submit_predictions``, in the same order: may ``user``
    submit predictions to ``task`` (``check_can_submit``; the daily allowance is not counted, as a
    dry run spends none), the task has scoring datasets, the file's size
    (``PREDICTIONS_MAX_BYTES``), then ``parse_predictions`` (every problem listed with line
    numbers). Raises the ``RuleError`` a submission would raise; returns a ``PredictionsCheck``.
    """
    check_can_submit(user=user, task=task, name=name or DRY_RUN_NAME, rate_limited=False, submission="predictions")
    datasets = require_scoring_items(task)
    staged = stage_upload(upload, max_bytes=max_predictions_bytes(), what="predictions file", directory=models_root())
    try:
        with open(staged, "rb") as fh:
            predictions = parse_predictions(task, fh, datasets=datasets)
    finally:
        staged.unlink(missing_ok=True)
    counts: dict[str, int] = {}
    for dataset, _uid in predictions:
        counts[dataset] = counts.get(dataset, 0) + 1
    return PredictionsCheck(predictions=len(predictions), datasets=counts)


def _weights_sizes(raw) -> dict[str, int]:
    """``{member name: bytes}`` from the JSON object a client sends for the weights it left out."""
    if raw in (None, ""):
        return {}
    try:
        sizes = loads_bounded(raw) if isinstance(raw, (str, bytes)) else raw
    except (json.JSONDecodeError, JSONTooDeep) as error:
        raise RuleError(Code.NOT_AN_ARCHIVE, f"weights_sizes is not valid JSON ({error}).", field="weights_sizes") from None
    if not isinstance(sizes, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in sizes.values()):
        raise RuleError(Code.NOT_AN_ARCHIVE, 'weights_sizes must be an object {"path.safetensors": bytes, ...}.', field="weights_sizes")
    return {str(k): int(v) for k, v in sizes.items()}


def check_model_archive(*, user, task: Task, upload, weights_sizes=None, name: str = "") -> ArchiveCheck:
    """Run a model submission's cheap checks on the archive ``upload`` and store nothing.

    The checks of ``leaderboard.services.submit_model_archive`` that read no weights: may ``user``
    submit a model to ``task``, the archive's size, its members (``list_archive``,
    ``check_members``: paths, links, special files, pickles, code, weights present, unpacked size),
    the owner's storage quota, and the configuration and tokenizer files (``write_skeleton``, then
    ``check_model_directory``: architecture, labels, tokenizer).

    ``weights_sizes`` (a JSON object ``{member: bytes}``, optional) lets a client leave the weights
    out of a dry run: it packs each ``*.safetensors`` file as an empty member and names its real
    size here, so the size and quota checks count it while megabytes of weights stay home. Only
    empty ``.safetensors`` members take a size so; the real submission checks the real archive.
    Raises the ``RuleError`` a submission would raise; returns an ``ArchiveCheck``.
    """
    check_can_submit(user=user, task=task, name=name or DRY_RUN_NAME, rate_limited=False)
    sizes = _weights_sizes(weights_sizes)
    root = models_root()
    archive_path = stage_upload(upload, max_bytes=max_archive_bytes(), what="archive", directory=root)
    skeleton = Path(tempfile.mkdtemp(prefix=".preflight-", dir=root))
    try:
        members = list_archive(archive_path)
        declared = [
            replace(m, size=sizes[m.name]) if m.name in sizes and m.type == "file" and m.size == 0 and is_weights(m) else m
            for m in members
        ]
        unmatched = sorted(set(sizes) - {m.name for m in members if is_weights(m) and m.size == 0})
        if unmatched:
            raise RuleError(
                Code.NOT_AN_ARCHIVE,
                f"weights_sizes names {', '.join(unmatched[:10])}, which the archive has not as an empty .safetensors entry.",
                field="weights_sizes",
            )
        check_members(declared)
        kept = kept_files(declared)
        adding = sum(m.size for m in kept)
        check_storage_quota(user, adding)
        check_model_directory(write_skeleton(archive_path, members, kept_files(members), skeleton), task=task)
        return ArchiveCheck(files=sorted(m.name for m in kept), kept_bytes=adding)
    finally:
        archive_path.unlink(missing_ok=True)
        shutil.rmtree(skeleton, ignore_errors=True)
