"""Generated images no example references: removed after a grace period.

A text-to-image attempt (``annotation/t2i.py``) stores the generator's images before the annotator
judges them; an attempt abandoned (the tab closed, a new prompt, a refusal at judging) leaves
them behind. ``remove_unjudged_images`` removes, for every task whose kind ``generates_images``,
each ``ContextImage`` record that

- nobody uploaded (``uploaded_by`` empty: the generator made it),
- was last generated before the grace period (``created_at``; ``tasks.loop.image_generation.store``
  sets it again when the generator makes the same image again), and
- no example of the task references (``Example.input["images"]``, ``Example.model_output["images"]``,
  retracted examples included) and no context of the task names (any value of ``Context.data``),

and then its file and thumbnail from the storage unless another task's record still has the same
content hash (stored names are content-addressed and shared).

The grace period is ``settings.DYNABENCH_GENERATED_IMAGE_GRACE_S`` (default 86,400 s, one day),
never shorter than an attempt's signed state lives (``annotation.chat.STATE_MAX_AGE_S``, six hours),
so an image an annotator can still judge is never removed. Run it from cron or a scheduler:
``manage.py remove_unjudged_images`` (``--dry-run`` counts without removing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from annotation.chat import STATE_MAX_AGE_S
from annotation.models import Example
from tasks.loop.artefacts import storage
from tasks.data.image_files import stored_name, thumbnail_name
from tasks.models import Context, ContextImage, Task

logger = logging.getLogger(__name__)
DEFAULT_GRACE_S = 24 * 3600


def grace_period() -> timedelta:
    """``settings.DYNABENCH_GENERATED_IMAGE_GRACE_S`` (default one day), at least ``STATE_MAX_AGE_S``."""
    seconds = int(getattr(settings, "DYNABENCH_GENERATED_IMAGE_GRACE_S", DEFAULT_GRACE_S))
    return timedelta(seconds=max(seconds, STATE_MAX_AGE_S))


@dataclass
class Removed:
    """What a pass removed (or, in a dry run, would remove): ``records`` (``ContextImage`` rows),
    ``files`` (stored images and thumbnails deleted) and ``bytes`` (of the images, thumbnails not counted)."""

    records: int = 0
    files: int = 0
    bytes: int = 0


def _referenced(task: Task) -> set[str]:
    """Every sha256 an example or a context of ``task`` names."""
    hashes: set[str] = set()
    for example_input, output in Example.objects.filter(round__task=task).values_list("input", "model_output").iterator():
        hashes.update(h for h in (example_input or {}).get("images") or [] if isinstance(h, str))
        hashes.update(i["sha256"] for i in (output or {}).get("images") or [] if isinstance(i, dict) and isinstance(i.get("sha256"), str))
    for data in Context.objects.filter(round__task=task).values_list("data", flat=True).iterator():
        hashes.update(v for v in (data or {}).values() if isinstance(v, str) and len(v) == 64)
    return hashes


def remove_unjudged_images(*, now=None, dry_run: bool = False) -> Removed:
    """Remove the generated images no example references, older than ``grace_period()`` (module
    docstring); return what was removed. ``now``: the current time (tests pass one)."""
    cutoff = (now or timezone.now()) - grace_period()
    removed = Removed()
    for task in Task.objects.order_by("pk"):
        if not task.spec.generates_images:
            continue
        candidates = list(ContextImage.objects.filter(task=task, uploaded_by__isnull=True, created_at__lt=cutoff))
        if not candidates:
            continue
        referenced = _referenced(task)
        stale = [record for record in candidates if record.sha256 not in referenced]
        removed.records += len(stale)
        removed.bytes += sum(record.size for record in stale)
        if dry_run or not stale:
            continue
        ContextImage.objects.filter(pk__in=[record.pk for record in stale], created_at__lt=cutoff).delete()
        still_held = set(ContextImage.objects.filter(sha256__in=[r.sha256 for r in stale]).values_list("sha256", flat=True))
        store = storage()
        for record in stale:
            if record.sha256 in still_held:
                continue
            for name in (stored_name(record.sha256, record.ext), thumbnail_name(record.sha256)):
                if store.exists(name):
                    store.delete(name)
                    removed.files += 1
        logger.info("removed %d unjudged generated images of %s", len(stale), task.code)
    return removed
