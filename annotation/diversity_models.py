"""Records of diversity and near-duplicates (``annotation/diversity/``): each example's embedding,
a round's near-duplicate rule, and a round's diversity report."""

import numpy as np
from django.db import models


class ExampleEmbedding(models.Model):
    """The embedding of the text an annotator wrote (``task.spec.written_text``), stored once per example.

    ``vector`` is ``dim`` little-endian float32 values (``dim * 4`` bytes), L2-normalised, so a dot
    product is the cosine similarity. ``encoder`` and ``encoder_sha256`` (the sha256 of the encoder's
    ``model.safetensors``) and ``text_sha256`` (of the embedded text, UTF-8) say what it was computed
    from: a row whose encoder or text differs from now is recomputed (``annotation/diversity/embeddings.py``)
    as a new row, so an index that remembers the last row it read (``annotation/diversity/index.py``)
    picks it up. ``task`` and ``round`` repeat the example's, for the per-task index and per-round reads.
    """

    example = models.OneToOneField("annotation.Example", on_delete=models.CASCADE, related_name="embedding")
    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="+")
    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="+")
    encoder = models.CharField(max_length=100)
    encoder_sha256 = models.CharField(max_length=64)
    text_sha256 = models.CharField(max_length=64)
    dim = models.PositiveSmallIntegerField()
    vector = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["task", "encoder_sha256", "id"], name="embedding_task_since")]

    def as_array(self) -> np.ndarray:
        """The vector as a float32 array of shape ``(dim,)``."""
        return np.frombuffer(bytes(self.vector), dtype="<f4")


class SimilarityMode(models.TextChoices):
    OFF = "off", "Off: no check"
    WARN = "warn", "Warn: show close examples before submitting"
    REFUSE = "refuse", "Refuse: a near-copy cannot be submitted"


class RoundSimilarity(models.Model):
    """A round's near-duplicate rule, set by the task's owner (``annotation/diversity/rules.py``).

    ``threshold``: the cosine similarity (between -1 and 1) of two examples' embeddings at or above
    which they count as near-duplicates; ``mode``: off, warn (the create page shows how many examples
    of the round are that close) or refuse (``create_example`` refuses a near-copy, ``near_duplicate``).
    The validation app's pay rule gives no bonus to an example within ``threshold`` of one already paid.
    A round without a row is ``off`` at ``DEFAULT_THRESHOLD``.
    """

    DEFAULT_THRESHOLD = 0.9

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="similarity")
    threshold = models.FloatField(default=DEFAULT_THRESHOLD)
    mode = models.CharField(max_length=8, choices=SimilarityMode.choices, default=SimilarityMode.OFF)
    updated_at = models.DateTimeField(auto_now=True)


class RoundDiversity(models.Model):
    """A round's diversity report, written by the job ``annotation.diversity.report.compute_round_diversity``.

    ``figures`` (JSON): ``examples``, ``vendi`` with ``vendi_low``/``vendi_high`` (95% bootstrap interval),
    ``distinct_1``/``distinct_2``, ``self_bleu``, ``per_author`` (``[{author_id, examples, vendi, low, high}]``),
    ``near_duplicate_pairs`` (cosine ≥ the round's threshold) and ``lexical_pairs`` (MinHash LSH, Jaccard of
    word 3-shingles ≥ 0.8), ``clusters`` (HDBSCAN over validated fooling examples: ``size``, ``share``,
    ``terms``, ``examples``, ``vmer``), ``fooling_examples`` and ``noise``. ``status``: queued, running, done
    or failed (``reason``); ``progress`` (0 to 1): how far the running job is. The report is computed again
    by itself as the round's validated fooling examples grow (``annotation/diversity/refresh.py``).
    """

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="diversity")
    status = models.CharField(max_length=8, default="queued")
    progress = models.FloatField(default=0.0)
    reason = models.TextField(blank=True)
    figures = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)


class ExampleDiversity(models.Model):
    """Where the round's last diversity report (``annotation/diversity/report.py``) put one example.

    ``cluster``: the number of the report's cluster (``RoundDiversity.figures["clusters"]``) whose centroid
    is nearest the example's embedding, -1 for none (a round without clusters). ``representative``: the
    first-written example of its near-duplicate group (cosine ≥ the round's threshold,
    ``calculations.leader_groups``), the example itself when it leads its group; ``group_size``: the
    examples in that group, 1 for an example with no near-copy. Every row of a round is replaced when the
    report is computed again; an example written since has none.
    """

    example = models.OneToOneField("annotation.Example", on_delete=models.CASCADE, related_name="diversity")
    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="+")
    cluster = models.SmallIntegerField()
    representative = models.ForeignKey("annotation.Example", on_delete=models.CASCADE, related_name="+")
    group_size = models.PositiveIntegerField()
