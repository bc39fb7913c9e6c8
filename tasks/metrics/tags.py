"""Scores per tag: a dataset's items sliced by their tags, each slice scored with the task kind's
metrics (Dynaboard's per-slice view: Ma et al., "Dynaboard: An Evaluation-As-A-Service Platform
for Holistic Next-Generation Benchmarking", NeurIPS 2021, section 3)."""

from __future__ import annotations


def item_tags(item: dict) -> set[str]:
    """The tags of a dataset item: its ``tag`` and any ``metadata["tags"]`` (empty ones dropped)."""
    tags = {item.get("tag") or ""}
    extra = (item.get("metadata") or {}).get("tags") or []
    if isinstance(extra, list):
        tags |= {str(t) for t in extra}
    tags.discard("")
    return tags


def per_tag_metrics(items: list[dict], scores) -> dict[str, dict]:
    """``{tag: metrics of the items carrying that tag}``, tags in sorted order.

    ``items`` are dataset items (``{"uid", "tag"?, "metadata"?}``), in the order of ``scores``, a
    task kind's ``ItemScores`` (``tasks.kinds.base``), whose ``metrics(rows)`` scores a subset of rows.
    """
    by_tag: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        for tag in item_tags(item):
            by_tag.setdefault(tag, []).append(i)
    return {tag: scores.metrics(rows) for tag, rows in sorted(by_tag.items())}
