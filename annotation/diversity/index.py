"""A nearest-neighbour index of each task's example embeddings, kept in each process.

The index is usearch's HNSW graph over cosine distance (``usearch.index.Index``, keys = example ids).
usearch was chosen over hnswlib and faiss-cpu because it ships wheels for every platform we run on,
removes and replaces keys in place (an example whose text changed gets a new vector), and its exact
search (``usearch.index.search(..., exact=True)``) is the reference the benchmark measures recall
against (``benchmarks/diversity.py``; docs: ``docs/researchers/diversity.md``).

A process builds a task's index from the stored vectors (``ExampleEmbedding``) the first time it is
asked, then before each query adds the rows written since the last one it read (their ids only grow:
a recomputed embedding is a new row), so it follows examples as they arrive without a rebuild.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from annotation.diversity_models import ExampleEmbedding

CONNECTIVITY = 16
"""HNSW graph degree (usearch's ``connectivity``, M in the HNSW paper, Malkov & Yashunin 2018)."""
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128
"""Candidates kept while searching (ef); the benchmark's recall@10 is measured at this value."""

_lock = threading.Lock()
_indexes: dict[tuple[int, str], "TaskIndex"] = {}


def new_index(dim: int):
    """Return an empty usearch index for L2-normalised float32 vectors of length ``dim`` (cosine metric)."""
    from usearch.index import Index

    return Index(ndim=dim, metric="cos", dtype="f32", connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


@dataclass
class TaskIndex:
    """One task's index for one encoder (``encoder_sha256``); ``last_row`` is the last ``ExampleEmbedding``
    id it holds."""

    task_id: int
    encoder_sha256: str
    index: object = None
    last_row: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refresh(self) -> int:
        """Add the task's embeddings stored since ``last_row`` (replacing an example's older vector).
        Returns how many were added."""
        rows = list(ExampleEmbedding.objects.filter(task_id=self.task_id, encoder_sha256=self.encoder_sha256,
                                                    id__gt=self.last_row).order_by("id")
                    .values_list("id", "example_id", "vector"))
        if not rows:
            return 0
        vectors = np.stack([np.frombuffer(bytes(vector), dtype="<f4") for _, _, vector in rows])
        keys = np.array([example_id for _, example_id, _ in rows], dtype=np.uint64)
        if self.index is None:
            self.index = new_index(vectors.shape[1])
        else:
            for key in keys:
                if self.index.contains(int(key)):
                    self.index.remove(int(key))
        # Keep the last vector of an example written twice in this batch.
        _, last = np.unique(keys[::-1], return_index=True)
        keep = np.sort(len(keys) - 1 - last)
        self.index.add(keys[keep], vectors[keep])
        self.last_row = rows[-1][0]
        return len(rows)

    def search(self, vector: np.ndarray, *, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(example_id, cosine similarity)`` nearest to ``vector`` (shape ``(dim,)``,
        L2-normalised), most similar first, after adding the rows stored since the last call."""
        with self.lock:
            self.refresh()
            if self.index is None or len(self.index) == 0:
                return []
            found = self.index.search(np.asarray(vector, dtype=np.float32), min(k, len(self.index)))
        return [(int(key), 1.0 - float(distance)) for key, distance in zip(found.keys, found.distances)]


def task_index(task_id: int, *, encoder_sha256: str) -> TaskIndex:
    """Return this process's index of ``task_id`` for the encoder with weights ``encoder_sha256``."""
    with _lock:
        key = (task_id, encoder_sha256)
        if key not in _indexes:
            _indexes[key] = TaskIndex(task_id=task_id, encoder_sha256=encoder_sha256)
        return _indexes[key]


def forget_indexes() -> None:
    """Drop every index this process holds (tests; a task's rows deleted wholesale)."""
    with _lock:
        _indexes.clear()
