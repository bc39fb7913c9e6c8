"""What the review queues show: the validator's review card, the examples waiting per round,
and the owner's queue of contested examples.

Reads only; handing out and leasing examples is ``validation/queue.py``.
"""

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from annotation.models import Example, RoundTally, ValidationState
from tasks.kinds.display import field_label, review_label
from tasks.data.audio import audio_context_fields
from tasks.data.images import image_context_fields


# --- what a validator sees ----------------------------------------------------------------


@dataclass(frozen=True)
class ReviewDisplay:
    """What the review card shows of one example, in the validator's words.

    ``context``: ``[(heading, text)]`` of the context fields other than the passage;
    ``written``: ``[(heading, text)]`` of the fields the annotator wrote, headed for a
    validator ("The annotator's sentence", not "Your sentence"); ``answer``: the task kind's
    ``answer_display`` (label bars, or the passage cut into segments marking the annotator's
    span and the model's); ``passage_heading``: the passage's heading, None for a kind without one.
    """

    context: list
    written: list
    answer: dict
    passage_heading: str | None
    image_hashes: tuple = ()
    """The sha256 of each image context field's value (``tasks.data.images``): the pages show those
    context entries as images, not as their hash."""
    audio_hashes: tuple = ()
    """The sha256 of each audio context field's value (``tasks.data.audio``): the pages show those
    context entries as players."""


def review_display(example) -> ReviewDisplay:
    """Return the ``ReviewDisplay`` of ``example`` (its round, task and context loaded)."""
    task = example.round.task
    config = task.config
    passage_field = task.spec.passage_field(config)
    data = {**example.context.data, **example.input}
    context = [
        (field_label(f), data.get(f["name"], "")) for f in config["context_fields"] if f["name"] != passage_field
    ]
    written = [  # an optional field the annotator left empty is not shown
        (review_label(f), example.input[f["name"]]) for f in config["input_fields"] if str(example.input.get(f["name"]) or "").strip()
    ]
    passage_heading = next(
        (field_label(f) for f in config["context_fields"] + config["input_fields"] if f["name"] == passage_field), None
    )
    answer = task.spec.answer_display(config, data, example.target, example.model_output)
    images = tuple(h for h in (data.get(n) for n in image_context_fields(config)) if h)
    clips = tuple(h for h in (data.get(n) for n in audio_context_fields(config)) if h)
    return ReviewDisplay(context=context, written=written, answer=answer, passage_heading=passage_heading, image_hashes=images,
                         audio_hashes=clips)


def pending_counts(rounds) -> dict[int, int]:
    """``{round_id: n}``: examples of each round still waiting for validators, in one grouped query.

    Waiting: pending, not retracted, and fooling the model unless the task's
    ``validate_non_fooling`` sends every example to the queue (the queue's rule).
    """
    rounds = list(rounds)
    every = {r.pk: bool(r.task.config.get("validate_non_fooling")) for r in rounds}
    rows = (
        Example.objects.filter(round__in=rounds, retracted=False, validation_state=ValidationState.PENDING)
        .values("round_id", "model_wrong")
        .annotate(n=Count("id"))
        .order_by()
    )
    found = {r.pk: 0 for r in rounds}
    for row in rows:
        if row["model_wrong"] or every[row["round_id"]]:
            found[row["round_id"]] += row["n"]
    return found


def owner_queue(round, *, min_flags: int = 0, disagreement: bool = False, state: str | None = None) -> QuerySet:
    """Return ``round``'s non-retracted examples for owner review, most contested first.

    ``min_flags``: at least that many ``flagged`` validations. ``disagreement``: validations
    with two or more different labels. ``state``: one ``ValidationState`` value or None for all.
    ``Example.disagreeing`` (a stored generated column) = validations minus the largest label
    count; the order fits the partial index ``example_owner_queue``, so the first page reads
    25 rows of the index, never the whole round.
    """
    examples = Example.objects.filter(round=round, retracted=False).select_related("author", "context", "round__task")
    if min_flags:
        examples = examples.filter(flagged_count__gte=min_flags)
    if disagreement:
        examples = examples.filter(disagreeing__gt=0)
    if state:
        examples = examples.filter(validation_state=state)
    return examples.order_by("-flagged_count", "-disagreeing", "created_at", "pk")


def owner_queue_size(round, *, min_flags: int = 0, disagreement: bool = False, state: str | None = None) -> int | None:
    """The number of examples ``owner_queue`` returns with these filters when the round's tally
    knows it (no flag or disagreement filter: all non-retracted examples, or those in
    ``state``); None otherwise (count the queryset)."""
    if min_flags or disagreement:
        return None
    tally = RoundTally.objects.filter(round=round).first()
    if tally is None:
        return 0
    return getattr(tally, state) if state else tally.collected
