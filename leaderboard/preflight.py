"""Dry runs of submissions: the server's own checks of a predictions file or a model archive, storing nothing.

``dynabench check`` (and every ``dynabench submit``) asks these before the real upload, so a file
that would be refused is refused in a second, with the same line-numbered problems a real
submission answers: the checks are the very functions the submission services call
(``leaderboard.predictions.parse_predictions``; ``leaderboard.archives.unpack_archive``, the
unpacking job's entry-by-entry reader, and ``tasks.loop.model_checks.check_model_directory``), never a
copy. Nothing is written but a staged temporary file, removed before the answer; no model row,
no artefact, no job, and the daily submission allowance is not spent.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONTooDeep, loads_bounded
from leaderboard.archives import (
    MiB,
    max_archive_bytes,
    max_unpacked_bytes,
    model_folder,
    models_root,
    stage_upload,
    unpack_archive,
)
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.predictions import parse_predictions, require_scoring_items
from leaderboard.quota import check_storage_quota
from leaderboard.services import check_can_submit, check_selection_submission, max_predictions_bytes
from tasks.loop.model_checks import check_model_directory
from tasks.models import Task

#: The name a dry run checks when the caller gives none (names are checked like a submission's).
DRY_RUN_NAME = "preflight"

#: Bytes a dry run unpacks at most: a client packs the weights as empty entries and names their
#: sizes (``weights_sizes``), so a dry-run archive holds configuration and tokenizer files only.
PREFLIGHT_MAX_UNPACKED_BYTES = 64 * MiB


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


@dataclass(frozen=True)
class SelectionCheck:
    """A selection that a submission would accept: ``selected`` uids of the pool dataset ``pool``."""

    selected: int
    pool: str


def check_selection(*, user, task: Task, uids, name: str = "") -> SelectionCheck:
    """Run a selection submission's checks (``leaderboard.services.check_selection_submission``, the
    function ``submit_selection`` calls) and store nothing; the daily allowance is not counted.
    Raises the ``RuleError`` a submission would raise (``bad_selection`` naming the first offender)."""
    _, checked, pool = check_selection_submission(user=user, task=task, uids=uids, name=name or DRY_RUN_NAME, rate_limited=False)
    return SelectionCheck(selected=len(checked), pool=pool)


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
    """Run a model submission's checks on the archive ``upload`` and store nothing.

    The checks of ``leaderboard.services.submit_model_archive`` and of its unpacking job, on an
    archive whose weights the client left out: may ``user`` submit a model to ``task``, the
    archive's size, its entries read one by one by the job's own reader
    (``leaderboard.archives.unpack_archive``: paths, links, special files, pickles, code, weights
    present; at most ``PREFLIGHT_MAX_UNPACKED_BYTES`` unpacked here), the declared unpacked size
    (``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``) and the owner's storage quota, then the configuration
    and tokenizer files (``check_model_directory``: architecture, labels, tokenizer).

    ``weights_sizes`` (a JSON object ``{member: bytes}``, optional) names the real size of each
    ``*.safetensors`` file packed as an empty entry, so the size and quota checks count it while
    the weights stay home; the real submission checks the real archive. Raises the ``RuleError``
    a submission would raise; returns an ``ArchiveCheck``.
    """
    check_can_submit(user=user, task=task, name=name or DRY_RUN_NAME, rate_limited=False)
    sizes = _weights_sizes(weights_sizes)
    root = models_root()
    archive_path = stage_upload(upload, max_bytes=max_archive_bytes(), what="archive", directory=root)
    unpacked = Path(tempfile.mkdtemp(prefix=".preflight-", dir=root))
    try:
        unpack_archive(archive_path, unpacked, max_bytes=PREFLIGHT_MAX_UNPACKED_BYTES)
        files = {str(f.relative_to(unpacked)): f.stat().st_size for f in unpacked.rglob("*") if f.is_file()}
        empty_weights = {n for n, size in files.items() if size == 0 and n.endswith(".safetensors")}
        unmatched = sorted(set(sizes) - empty_weights)
        if unmatched:
            raise RuleError(
                Code.NOT_AN_ARCHIVE,
                f"weights_sizes names {', '.join(unmatched[:10])}, which the archive has not as an empty .safetensors entry.",
                field="weights_sizes",
            )
        declared = {n: sizes.get(n, size) for n, size in files.items()}
        adding = sum(declared.values())
        if adding > max_unpacked_bytes():
            raise RuleError(
                Code.ARCHIVE_TOO_BIG,
                f"The archive unpacks to {adding / MiB:,.1f} MiB, more than the limit of {max_unpacked_bytes() / MiB:,.0f} MiB. "
                "Leave out optimizer states, checkpoints and anything the model does not need to run.",
                field="upload", status_code=413,
            )
        check_storage_quota(user, adding)
        check_model_directory(model_folder(unpacked), task=task)
        return ArchiveCheck(files=sorted(files), kept_bytes=adding)
    finally:
        archive_path.unlink(missing_ok=True)
        shutil.rmtree(unpacked, ignore_errors=True)
