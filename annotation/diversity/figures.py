"""A round's diversity figures from its texts and embeddings: no ORM (the job ``report.py`` reads the
rows; ``benchmarks/diversity_real_data.py`` feeds the real DynaSent and ANLI rounds through the same function)."""

from __future__ import annotations

import numpy as np

from annotation.diversity import calculations

MIN_AUTHOR_EXAMPLES = 5
"""An annotator's own Vendi score is given from this many examples."""
AUTHOR_RESAMPLES = 100
"""Bootstrap resamples of an annotator's own Vendi interval."""
SHOWN_EXAMPLES = 3
"""Examples listed per cluster."""
SHOWN_PAIRS = 20
COMPARED_AT = 500
"""Rows per subsample of ``vendi_at_500``: rounds of different sizes compared at one size."""


def round_figures(
    *, texts: list[str], X: np.ndarray, authors: list, fooled: list[bool], threshold: float,
    ids: list | None = None, min_cluster_size: int = 5, resamples: int = 200,
) -> dict:
    """Return a round's diversity figures (the ``RoundDiversity.figures`` shape).

    ``texts[i]`` is example i's written text, ``X[i]`` its L2-normalised embedding (shape ``(n, d)``),
    ``authors[i]`` its author's id, ``fooled[i]`` whether it fooled the model and was validated correct,
    ``ids[i]`` its id (default ``i``). ``per_author`` gives each annotator of at least ``MIN_AUTHOR_EXAMPLES``
    examples their own Vendi score with its 95 % bootstrap interval (``low``, ``high``). Clusters (HDBSCAN) are of the validated fooling examples; every
    example of the round is then assigned to the cluster of the nearest centroid (cosine), and a
    cluster's ``vmer`` is its validated fooling examples over the examples assigned to it.
    ``vendi_at_500`` is ``[mean, low, high]`` over subsamples of 500 (None for fewer rows).
    ``near_duplicate_pairs`` counts pairs at cosine ≥ ``threshold`` (``pairs`` lists the closest
    ``SHOWN_PAIRS`` as ``[id, id, cosine]``); ``lexical_pairs`` counts pairs at word 3-shingle Jaccard ≥ 0.8.
    ``assigned`` maps each id to its cluster (-1: none) and ``leaders`` each id to the id leading its
    near-duplicate group (``calculations.leader_groups``: rows are taken in the order given); the job
    stores these two per example (``ExampleDiversity``), not in the report.
    """
    ids = list(range(len(texts))) if ids is None else list(ids)
    X = np.asarray(X, dtype=np.float32).reshape(len(texts), -1)
    low, high = calculations.vendi_interval(X, resamples=resamples)
    near = calculations.cosine_pairs(X, threshold=threshold)
    by_author: dict = {}
    for row, author in enumerate(authors):
        by_author.setdefault(author, []).append(row)
    per_author = [
        {"author_id": author, "examples": len(rows), "vendi": calculations.vendi_score(X[rows]),
         **dict(zip(("low", "high"), calculations.vendi_interval(X[rows], resamples=AUTHOR_RESAMPLES)))}
        for author, rows in by_author.items() if len(rows) >= MIN_AUTHOR_EXAMPLES
    ]
    return {
        "examples": len(texts),
        "vendi": calculations.vendi_score(X), "vendi_low": low, "vendi_high": high,
        "vendi_at_500": calculations.vendi_at(X, size=COMPARED_AT),
        "distinct_1": calculations.distinct_n(texts, 1), "distinct_2": calculations.distinct_n(texts, 2),
        "self_bleu": calculations.self_bleu(texts),
        "per_author": sorted(per_author, key=lambda a: a["vendi"]),
        "threshold": threshold,
        "near_duplicate_pairs": len(near),
        "leaders": {ids[i]: ids[int(leader)] for i, leader in enumerate(calculations.leader_groups(X, threshold=threshold, pairs=near))},
        "pairs": [[ids[i], ids[j], round(s, 4)] for i, j, s in near[:SHOWN_PAIRS]],
        "lexical_pairs": len(calculations.lexical_pairs(texts)),
        **cluster_figures(texts=texts, X=X, fooled=fooled, ids=ids, min_cluster_size=min_cluster_size),
    }


def cluster_figures(*, texts: list[str], X: np.ndarray, fooled: list[bool], ids: list, min_cluster_size: int = 5) -> dict:
    """Return ``{"fooling_examples", "clusters", "noise", "assigned"}``: the clusters of the validated fooling
    rows (see ``round_figures``), largest first, each ``{"cluster", "size", "share", "terms", "examples",
    "assigned", "vmer"}``; ``noise`` the fooling rows in no cluster; ``assigned`` maps each id to its
    cluster number (-1: none)."""
    fooling = [i for i, f in enumerate(fooled) if f]
    found, labels = calculations.clusters(X[fooling], [texts[i] for i in fooling], min_cluster_size=min_cluster_size)
    assigned = {ids[i]: -1 for i in range(len(texts))}
    shown = []
    if found:
        centroids = np.stack([X[[fooling[m] for m in c.members]].mean(axis=0) for c in found])
        centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
        nearest = np.argmax(X @ centroids.T, axis=1)
        for number, cluster in enumerate(found):
            members = [fooling[m] for m in cluster.members]
            rows = np.nonzero(nearest == number)[0]
            in_cluster = int(sum(1 for r in rows if fooled[r]))
            for r in rows:
                assigned[ids[r]] = number
            shown.append({
                "cluster": number, "size": len(members), "share": cluster.share, "terms": cluster.terms,
                "examples": [[ids[m], texts[m]] for m in members[:SHOWN_EXAMPLES]],
                "assigned": int(len(rows)), "vmer": in_cluster / len(rows) if len(rows) else 0.0,
            })
    return {"fooling_examples": len(fooling), "clusters": shown, "noise": int(sum(1 for label in labels if label == -1)),
            "assigned": assigned}
