"""Each example's embedding, stored once (``ExampleEmbedding``) and recomputed only when its text or
the encoder changes.

``embed_task(task_id)`` is the RQ job (queue ``default``): it finds the task's examples whose stored
embedding is missing, of another encoder (by the weights' sha256) or of another text (by the text's
sha256), embeds them in batches and writes them. ``queue_embedding(task_id)`` queues it when the
current transaction commits, at most once per ``QUEUE_DEBOUNCE_S`` per task (the job takes every
example waiting, so one run serves a burst). An example checked against the round's near-duplicate
rule was embedded then, and its vector is stored with it (``store_vectors``) instead of queued.
"""

from __future__ import annotations

import hashlib

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from annotation.diversity import encoder as encoders
from annotation.diversity_models import ExampleEmbedding
from annotation.models import Example

JOB = "annotation.diversity.embeddings.embed_task"
QUEUE_DEBOUNCE_S = 10
WRITE_BATCH = 512


def text_sha256(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def written_text(example: Example) -> str:
    """The text the annotator wrote for ``example`` (its task kind's ``written_text``)."""
    task = example.round.task
    return task.spec.written_text(task.config, example.input)


def store_vectors(pairs: list[tuple[Example, str, np.ndarray]], *, encoder: encoders.Encoder) -> int:
    """Store ``(example, text, vector)`` triples as each example's embedding, replacing an older one
    (as a new row, so per-task indexes see it); ``vector`` is float32 of shape ``(encoder.dim,)``.
    Returns the number of rows written."""
    if not pairs:
        return 0
    rows = [
        ExampleEmbedding(example_id=example.pk, task_id=example.round.task_id, round_id=example.round_id,
                         encoder=encoder.name, encoder_sha256=encoder.sha256, text_sha256=text_sha256(text),
                         dim=encoder.dim, vector=np.asarray(vector, dtype="<f4").tobytes())
        for example, text, vector in pairs
    ]
    with transaction.atomic():
        ExampleEmbedding.objects.filter(example_id__in=[row.example_id for row in rows]).delete()
        ExampleEmbedding.objects.bulk_create(rows)
    return len(rows)


def examples_to_embed(task_id: int, *, encoder: encoders.Encoder) -> list[tuple[Example, str]]:
    """Return ``(example, text)`` for the task's examples with written text whose stored embedding is
    missing or was computed from another encoder or another text, in id order."""
    stored = dict(ExampleEmbedding.objects.filter(task_id=task_id, encoder_sha256=encoder.sha256)
                  .values_list("example_id", "text_sha256"))
    wanted = []
    for example in Example.objects.filter(round__task_id=task_id).select_related("round__task").order_by("id").iterator(2000):
        text = written_text(example)
        if text and stored.get(example.pk) != text_sha256(text):
            wanted.append((example, text))
    return wanted


def embed_task(task_id: int, *, on_progress=None) -> str:
    """RQ job: embed the task's examples that need it (``examples_to_embed``) in batches and store them;
    ``on_progress(done, total)`` is called after each batch (the report's job shows it). Returns a one-line
    summary, e.g. ``"embedded 120 examples of task 3 with all-MiniLM-L6-v2"``."""
    cache.delete(_queued_key(task_id))
    encoder = encoders.get_encoder()
    wanted = examples_to_embed(task_id, encoder=encoder)
    for start in range(0, len(wanted), WRITE_BATCH):
        chunk = wanted[start:start + WRITE_BATCH]
        vectors = encoder.embed([text for _, text in chunk])
        store_vectors([(example, text, vector) for (example, text), vector in zip(chunk, vectors)], encoder=encoder)
        if on_progress is not None:
            on_progress(start + len(chunk), len(wanted))
    return f"embedded {len(wanted)} examples of task {task_id} with {encoder.name}"


def _queued_key(task_id: int) -> str:
    return f"diversity:embed-queued:{task_id}"


def queue_embedding(task_id: int) -> None:
    """Queue ``embed_task(task_id)`` when the current transaction commits, unless one was queued in the
    last ``QUEUE_DEBOUNCE_S`` seconds and has not started, or ``settings.DYNABENCH_EMBED_ON_ARRIVAL`` is off."""
    if getattr(settings, "DYNABENCH_EMBED_ON_ARRIVAL", True):
        transaction.on_commit(lambda: _enqueue(task_id))


def _enqueue(task_id: int) -> None:
    if not cache.add(_queued_key(task_id), 1, timeout=QUEUE_DEBOUNCE_S):
        return
    import django_rq

    django_rq.get_queue("default").enqueue(JOB, task_id)
