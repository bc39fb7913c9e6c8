"""Reads of releases: which datasets a release takes, their items as rows, a task's releases."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import F
from django.db.models.fields.json import KT

from releases.models import Release
from tasks.models import Dataset, DatasetItem, Round, Task


@dataclass(frozen=True)
class Group:
    """The datasets of one round and split: one file per format in a release."""

    round: int
    split: str
    dataset_ids: tuple[int, ...]

    @property
    def stem(self) -> str:
        """The file name without extension: ``data/round<n>-<split>``."""
        return f"data/round{self.round}-{self.split}"


def release_datasets(task: Task, dataset_ids: list[int] | None = None) -> tuple[list[Dataset], list[Dataset]]:
    """Return ``(public, hidden)``: the datasets of ``task``'s closed rounds a release takes (only
    ``dataset_ids`` when given and not empty), split by label visibility (``Dataset.labels_hidden``,
    decided by ``tasks.models.default_label_visibility`` and ``tasks.services.publish_labels``).
    Hidden sets never enter a public release: they go to the owner-only artefact."""
    datasets = (Dataset.objects.filter(task=task, round__status=Round.Status.CLOSED)
                .select_related("round").order_by("round__number", "split", "name"))
    if dataset_ids:
        datasets = datasets.filter(pk__in=dataset_ids)
    datasets = list(datasets)
    return [d for d in datasets if not d.labels_hidden], [d for d in datasets if d.labels_hidden]


def groups_of(datasets: list[Dataset]) -> list[Group]:
    """The datasets grouped by (round number, split), in that order; an unsplit dataset's split is ``all``."""
    found: dict[tuple[int, str], list[int]] = {}
    for dataset in datasets:
        found.setdefault((dataset.round.number, dataset.split or "all"), []).append(dataset.pk)
    return [Group(number, split, tuple(ids)) for (number, split), ids in sorted(found.items())]


def group_rows(group: Group, columns: list[dict], *, chunk: int = 10_000) -> Iterator[tuple]:
    """Yield ``(uid, tag, value per column)`` of each item of ``group``'s datasets, by dataset id then
    uid (the order of the unique index on ``(dataset, uid)``: no sort on the database, and the same
    order whatever order the items were written in). ``columns``: the kind's ``release_columns``; a ``string`` or ``label`` column is read
    as text by the database (``KT``), a ``json`` column as its JSON value (None when absent)."""
    names = {}
    for i, column in enumerate(columns):
        path = f"{column['source']}__{column['key']}"
        names[f"c{i}"] = KT(path) if column["type"] in ("string", "label") else F(path)
    items = (DatasetItem.objects.filter(dataset_id__in=group.dataset_ids).order_by("dataset_id", "uid")
             .annotate(**names).values_list("uid", "tag", *names))
    yield from items.iterator(chunk_size=chunk)


def item_count(datasets: list[Dataset]) -> int:
    """Items of ``datasets``, counted by the database."""
    return DatasetItem.objects.filter(dataset__in=datasets).count()


def published_releases(task: Task):
    """``task``'s published releases, newest first."""
    return Release.objects.filter(task=task, status=Release.Status.PUBLISHED).order_by("-published_at", "-pk")


def latest_published(task: Task) -> Release | None:
    """``task``'s newest published release, or None."""
    return published_releases(task).first()
