"""Diversity arithmetic over texts and their embeddings: no ORM, no model.

Embeddings ``X`` are float arrays of shape ``(n, d)`` whose rows are L2-normalised (the encoder's
output), so ``X @ X.T`` is the cosine kernel.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import numpy as np

WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (``\\w+`` runs)."""
    return WORD.findall(text.lower())


def vendi_score(X: np.ndarray) -> float:
    """Return the Vendi score of the rows of ``X`` under the cosine kernel (order q = 1).

    VS = exp(-Σ λ_i log λ_i), λ_i the eigenvalues of K/n, K_ij = x_i·x_j (Friedman & Dieng, "The Vendi
    Score: A Diversity Evaluation Metric for Machine Learning", TMLR 2023, eq. 1). The non-zero
    eigenvalues of X Xᵀ/n are those of Xᵀ X/n, so the smaller of the two matrices is decomposed
    (the ``score_dual`` of the authors' ``vendi-score`` package). Between 1 (all rows the same) and
    ``n`` (orthogonal rows); 0.0 for no rows. Rows are normalised again here, so ``X`` may be raw.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n == 0:
        return 0.0
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    gram = (X.T @ X) if X.shape[1] < n else (X @ X.T)
    eigenvalues = np.linalg.eigvalsh(gram / n)
    eigenvalues = eigenvalues[eigenvalues > 0]
    return float(np.exp(-np.sum(eigenvalues * np.log(eigenvalues))))


def vendi_interval(X: np.ndarray, *, resamples: int = 200, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Return the percentile bootstrap interval ``(low, high)`` of ``vendi_score`` at ``level``.

    Each resample draws n rows with replacement (Efron & Tibshirani 1993, ch. 13). A resample repeats
    rows, so it scores lower than the sample: the interval sits below the point estimate and says how
    much the score moves with the sample, not where an unbiased score lies. ``(0.0, 0.0)`` for no rows.
    """
    X = np.asarray(X)
    n = X.shape[0]
    if n == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    scores = np.sort([vendi_score(X[rng.integers(0, n, n)]) for _ in range(resamples)])
    tail = (1 - level) / 2
    return float(np.quantile(scores, tail)), float(np.quantile(scores, 1 - tail))


def vendi_at(X: np.ndarray, *, size: int, draws: int = 50, level: float = 0.95, seed: int = 0) -> tuple[float, float, float] | None:
    """Return ``(mean, low, high)`` of ``vendi_score`` over ``draws`` subsamples of ``size`` rows drawn
    without replacement, with the percentile interval at ``level``; None when ``X`` has fewer rows.

    The Vendi score grows with the number of rows, so rounds or annotators of different sizes are
    compared at one ``size``; unlike the bootstrap, this interval brackets its own mean."""
    X = np.asarray(X)
    if X.shape[0] < size or size < 1:
        return None
    rng = np.random.default_rng(seed)
    scores = np.array([vendi_score(X[rng.choice(X.shape[0], size, replace=False)]) for _ in range(draws)])
    tail = (1 - level) / 2
    return float(scores.mean()), float(np.quantile(scores, tail)), float(np.quantile(scores, 1 - tail))


def distinct_n(texts: list[str], n: int) -> float:
    """Return distinct-n: distinct word n-grams over all word n-grams of ``texts`` (Li et al., "A
    Diversity-Promoting Objective Function for Neural Conversation Models", NAACL 2016). 0.0 when
    there is no n-gram."""
    grams = [tuple(tokens[i:i + n]) for tokens in map(words, texts) for i in range(len(tokens) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def self_bleu(texts: list[str], *, hypotheses: int = 300, references: int = 300, seed: int = 0) -> float:
    """Return self-BLEU (0-100): the mean sentence BLEU of a text against the other texts as references
    (Zhu et al., "Texygen", SIGIR 2018), with sacreBLEU's ``sentence_bleu`` (exp smoothing, 13a
    tokenisation). Higher means more alike. Past ``hypotheses`` texts a seeded sample is scored, each
    against at most ``references`` others (sampled). 0.0 for fewer than two texts."""
    from sacrebleu.metrics import BLEU

    if len(texts) < 2:
        return 0.0
    rng = random.Random(seed)
    indices = list(range(len(texts)))
    chosen = indices if len(texts) <= hypotheses else rng.sample(indices, hypotheses)
    bleu = BLEU(effective_order=True)
    scores = []
    for i in chosen:
        others = [j for j in indices if j != i]
        if len(others) > references:
            others = rng.sample(others, references)
        scores.append(bleu.sentence_score(texts[i], [texts[j] for j in others]).score)
    return float(np.mean(scores))


def cosine_pairs(X: np.ndarray, *, threshold: float, block: int = 2048) -> list[tuple[int, int, float]]:
    """Return every pair ``(i, j, cosine)`` with i < j and cosine ≥ ``threshold``, exactly (blockwise
    ``X @ X.T``), most similar first."""
    X = np.asarray(X, dtype=np.float32)
    pairs = []
    for start in range(0, X.shape[0], block):
        sims = X[start:start + block] @ X.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows, cols):
            i = start + int(r)
            if i < c:
                pairs.append((i, int(c), float(sims[r, c])))
    return sorted(pairs, key=lambda p: -p[2])


def leader_groups(X: np.ndarray, *, threshold: float, pairs: list[tuple[int, int, float]] | None = None) -> np.ndarray:
    """Return ``leader`` of shape ``(n,)``: for each row of ``X`` (L2-normalised, in the order written), the
    row that leads its near-duplicate group, itself for a leader.

    Rows are taken in order; a row at cosine ≥ ``threshold`` with one or more leaders taken before it joins
    the most similar of them, else it leads a group of its own (leader clustering, Hartigan, "Clustering
    Algorithms", 1975, ch. 3). The pay rule's "near-copy of an example already paid" and the export's
    deduplicated view are these groups. ``pairs``: ``cosine_pairs(X, threshold=threshold)`` when already
    computed.
    """
    n = np.asarray(X).shape[0]
    pairs = cosine_pairs(X, threshold=threshold) if pairs is None else pairs
    earlier: dict[int, list[tuple[int, float]]] = {}
    for i, j, similarity in pairs:
        earlier.setdefault(j, []).append((i, similarity))
    leader = np.arange(n)
    for row in range(n):
        candidates = [(similarity, i) for i, similarity in earlier.get(row, ()) if leader[i] == i]
        if candidates:
            leader[row] = max(candidates, key=lambda c: (c[0], -c[1]))[1]
    return leader


def shingles(text: str, k: int = 3) -> set[str]:
    """The word ``k``-shingles of ``text`` (the whole text when it has fewer than ``k`` words)."""
    tokens = words(text)
    if len(tokens) < k:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1)}


def lexical_pairs(texts: list[str], *, threshold: float = 0.8, num_perm: int = 128) -> list[tuple[int, int, float]]:
    """Return pairs ``(i, j, jaccard)`` of texts whose word 3-shingle sets have Jaccard similarity ≥
    ``threshold``: candidates from MinHash LSH (Broder 1997; ``datasketch.MinHashLSH``), each then
    checked on the exact Jaccard, so there are no false positives (LSH may miss a few pairs near the
    threshold)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    found = []
    sets = [shingles(text) for text in texts]
    for i, grams in enumerate(sets):
        if grams:
            sketch = MinHash(num_perm=num_perm, seed=1)
            sketch.update_batch([g.encode("utf-8") for g in grams])
            for j in lsh.query(sketch):
                jaccard = len(grams & sets[j]) / len(grams | sets[j])
                if jaccard >= threshold:
                    found.append((j, i, jaccard))
            lsh.insert(i, sketch)
    return sorted(found, key=lambda p: -p[2])


def class_tfidf_terms(texts: list[str], labels: list[int], *, top: int = 8) -> dict[int, list[str]]:
    """Return each label's ``top`` terms by class-based TF-IDF: W_{t,c} = tf_{t,c} · log(1 + A / f_t),
    tf_{t,c} the frequency of term t in class c (all its texts joined), f_t its frequency over all
    classes, A the mean number of words per class (Grootendorst, "BERTopic", arXiv:2203.05794, eq. 1).
    English stop words are left out; label -1 (noise) gets no terms."""
    from sklearn.feature_extraction.text import CountVectorizer

    classes = sorted({label for label in labels if label != -1})
    if not classes:
        return {}
    joined = [" ".join(t for t, label in zip(texts, labels) if label == c) for c in classes]
    vectorizer = CountVectorizer(stop_words="english", token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z']+\b")
    try:
        counts = vectorizer.fit_transform(joined).toarray().astype(np.float64)
    except ValueError:  # only stop words
        return {c: [] for c in classes}
    tf = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    idf = np.log(1 + counts.sum(axis=1).mean() / np.maximum(counts.sum(axis=0), 1))
    weights = tf * idf
    vocabulary = vectorizer.get_feature_names_out()
    return {c: [vocabulary[k] for k in np.argsort(-weights[row])[:top] if weights[row, k] > 0] for row, c in enumerate(classes)}


@dataclass
class Cluster:
    """One HDBSCAN cluster: the ``members`` (row indices), ``share`` of all rows, ``terms``."""

    label: int
    members: list[int]
    share: float
    terms: list[str]


CLUSTER_COMPONENTS = 10
"""Principal components kept before clustering."""


def clusters(X: np.ndarray, texts: list[str], *, min_cluster_size: int = 5,
             components: int = CLUSTER_COMPONENTS) -> tuple[list[Cluster], list[int]]:
    """Cluster the rows of ``X`` with HDBSCAN (Campello et al. 2013; ``sklearn.cluster.HDBSCAN``, excess
    of mass), largest first, with their ``class_tfidf_terms``. Returns ``(clusters, labels)``, label -1
    for rows in no cluster (noise). Fewer than ``min_cluster_size`` rows: no cluster.

    The unit vectors are first reduced to their first ``components`` principal components (PCA,
    deterministic), as BERTopic reduces embeddings before HDBSCAN (it uses UMAP): in the full 384
    dimensions distances concentrate and HDBSCAN finds one large cluster and noise (on ANLI R1 dev:
    2 clusters, 790 of 1,000 rows noise, against 8 clusters and 732 after PCA to 10).
    """
    from sklearn.cluster import HDBSCAN
    from sklearn.decomposition import PCA

    n = len(texts)
    if n < max(min_cluster_size, 2):
        return [], [-1] * n
    X = np.asarray(X, dtype=np.float64)
    if X.shape[1] > components and n > components:
        X = PCA(n_components=components, random_state=0).fit_transform(X)
    labels = HDBSCAN(min_cluster_size=min_cluster_size, copy=True).fit_predict(X).tolist()
    terms = class_tfidf_terms(texts, labels)
    found = [Cluster(label=c, members=[i for i, label in enumerate(labels) if label == c], share=0.0, terms=terms.get(c, []))
             for c in sorted(set(labels) - {-1})]
    for cluster in found:
        cluster.share = len(cluster.members) / n
    return sorted(found, key=lambda c: -len(c.members)), labels
