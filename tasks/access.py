"""Who may read which data: the one place that decides what leaves the server.

- Tasks: active tasks are visible to everyone; inactive ones to their owners and admins.
- Datasets: visible to everyone; the items of a ``hidden`` dataset are given without their
  labels (``target``) or metadata, to everyone, owners included, through every endpoint.
- A round's verified examples: owners (and admins) may download them at any time; anyone
  may download them once the round is closed. Examples that went into a hidden dataset's
  split of that round (e.g. the test split) are never downloadable, and never show their
  label, model output or outcome, not even to their author.
"""

from django.db.models import Q, QuerySet

from annotation.models import Example, ValidationState
from tasks.models import Dataset, Round, Task


def visible_tasks(user) -> QuerySet:
    """Return the tasks ``user`` may see: active ones, plus inactive ones they own (all for admins)."""
    tasks = Task.objects.all()
    if user.is_authenticated and user.is_superuser:
        return tasks
    if user.is_authenticated:
        return tasks.filter(Q(active=True) | Q(owners=user)).distinct()
    return tasks.filter(active=True)


def labels_hidden(dataset: Dataset) -> bool:
    """True when the dataset's labels must never leave the server."""
    return dataset.access == Dataset.Access.HIDDEN


def hidden_splits() -> set[tuple[int, str]]:
    """Return the ``(round id, split)`` pairs whose examples went into a hidden dataset."""
    hidden = Dataset.objects.filter(access=Dataset.Access.HIDDEN, round__isnull=False).exclude(split="")
    return set(hidden.values_list("round_id", "split"))


def hidden_example_filter() -> Q:
    """A ``Q`` on ``Example`` matching examples that belong to a hidden dataset's split of their round."""
    query = Q(pk__in=[])
    for round_id, split in hidden_splits():
        query |= Q(round_id=round_id, split=split)
    return query


def can_download_round_examples(user, round: Round) -> bool:
    """Owners and admins at any time; anyone once the round is closed."""
    return round.status == Round.Status.CLOSED or round.task.is_owner(user)


def downloadable_examples(round: Round) -> QuerySet:
    """Return the round's verified-correct, non-retracted examples, hidden splits left out.

    The caller checks ``can_download_round_examples`` first.
    """
    return (
        Example.objects.filter(round=round, retracted=False, validation_state=ValidationState.VERIFIED_CORRECT)
        .exclude(hidden_example_filter())
        .order_by("id")
    )


def example_labels_hidden(example: Example, splits: set[tuple[int, str]] | None = None) -> bool:
    """True when ``example`` went into a hidden dataset's split: its label stays on the server.

    ``splits``: ``hidden_splits()`` computed once for many examples.
    """
    if not example.split:
        return False
    return (example.round_id, example.split) in (hidden_splits() if splits is None else splits)
