"""Closing a round into datasets: the preview an owner confirms, then the close itself.

``close_round`` takes the round's validated examples (``validation.selectors.validated_examples``),
splits them train/dev/test (``calculations.assign_splits``; small scoring splits refused or merged,
``calculations.small_split_plan``) into three ``Dataset`` rows, ends the round's crowd studies and
may open the next round (with its models, or a retrained one: ``validation.retraining``).
``preview_round_close`` shows the same decision beforehand; both refuse for the same problems.
"""

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotation import crowd_setup
from annotation.models import Example
from dynabench.errors import NotAllowed, RuleError
from tasks.models import Dataset, DatasetItem, Round, default_label_visibility
from tasks.selectors import evaluable_models
from tasks.services import DEFAULT_MIN_SCORING_ITEMS, open_round, record_dataset_content
from tasks.signals import round_status_changed
from validation import selectors
from validation.calculations import SPLITS, assign_splits, merged_sizes, small_split_plan, split_sizes
from validation.error_codes import ValidationErrorCode as Code
from validation.retraining import request_retraining

DEFAULT_SPLIT_RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}


def dataset_name(round, split) -> str:
    """Return the dataset name of ``round``'s ``split``: ``<task>-r<N>-<split>``."""
    return f"{round.task.code}-r{round.number}-{split}"


def _check_ratios(ratios) -> dict[str, float]:
    if not isinstance(ratios, dict) or set(ratios) != set(SPLITS):
        raise RuleError(Code.BAD_RATIOS, "Split ratios need exactly train, dev and test.", field="ratios")
    try:
        values = {s: float(ratios[s]) for s in SPLITS}
    except (TypeError, ValueError):
        raise RuleError(Code.BAD_RATIOS, "Split ratios must be numbers.", field="ratios") from None
    if any(v < 0 or v > 1 for v in values.values()) or abs(sum(values.values()) - 1) > 1e-6:
        raise RuleError(Code.BAD_RATIOS, f"Split ratios must be between 0 and 1 and sum to 1 (they sum to {sum(values.values()):g}).", field="ratios")
    return values


NEXT_LOOP_CHOICES = ("current", "retrained")
"""Who is in the loop of the round opened by ``close_round(open_next=...)``: the closed round's
models, or a model retrained on every validated example so far (trained in the background; it
takes the loop of the new round when its training finishes, the current models hold it until then)."""


@dataclass
class RoundClosePreview:
    """What closing ``round`` would do (``preview_round_close``), shown before the owner confirms.

    ``validated``: validated-correct examples; ``sizes``: ``{train, dev, test}`` item counts (after
    any merge); ``names``: the dataset name per split; ``models``: the model records that will be
    scored on the new dev and test sets; ``problems``: why closing is refused now (empty when it
    may close), e.g. a test split below the task's minimum; ``closed``: the round is already closed
    (closing again changes nothing); ``min_items``: the fewest items a dev or test set may hold
    (``Task.config["min_scoring_items"]``); ``merge_small``: the owner asked to merge small scoring
    splits; ``merges``: ``{split: split it joins}`` (``calculations.small_split_plan``), applied
    only with ``merge_small``; ``notes``: what the merge does, in words; ``warnings``: what the
    owner should know but that does not refuse the close (a scoring set far smaller than the
    task's other scoring sets, with the same weight in the Dynascore).
    """

    round: Round
    ratios: dict
    seed: int
    validated: int
    sizes: dict
    names: dict
    models: list
    problems: list
    closed: bool
    min_items: int = 1
    merge_small: bool = False
    merges: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def can_close(self) -> bool:
        return not self.problems and not self.closed

    @property
    def written(self) -> list[str]:
        """The splits that get a dataset: every split, less those merged away."""
        return [s for s in SPLITS if not (self.merge_small and s in self.merges)]

    def as_dict(self) -> dict:
        """JSON shape of the preview (the API's ``GET .../close``)."""
        return {
            "round": self.round.number, "status": self.round.status, "closed": self.closed, "can_close": self.can_close,
            "ratios": self.ratios, "seed": self.seed, "validated": self.validated,
            "splits": [{"split": s, "dataset": self.names[s], "items": self.sizes[s]} for s in SPLITS],
            "models_rescored": [{"id": m.pk, "name": m.name, "published": m.published} for m in self.models],
            "problems": self.problems, "min_scoring_items": self.min_items, "merge_small": self.merge_small,
            "merges": self.merges if self.merge_small else {}, "notes": self.notes, "warnings": self.warnings,
        }


def _close_settings(task, ratios, seed) -> tuple[dict, int]:
    ratios = _check_ratios(ratios if ratios is not None else task.config.get("split_ratios", DEFAULT_SPLIT_RATIOS))
    return ratios, int(seed if seed is not None else task.config.get("split_seed", 0))


SMALL_SET_FACTOR = 10
"""A new scoring set this many times smaller than the task's largest other scoring set gets a warning in the preview."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def preview_round_close(round: Round, *, ratios=None, seed=None, merge_small: bool = False) -> RoundClosePreview:
    """Return what closing ``round`` would do: validated examples per split, the datasets written,
    the models re-scored on them, and the problems that refuse it (``close_round`` checks the same).

    A dev or test split below the task's ``min_scoring_items`` (default 1: an empty one) is a
    problem, unless ``merge_small``: then the small scoring splits merge
    (``calculations.small_split_plan``: dev into test when together they reach the minimum, else
    both into train, so the round adds no scoring set) and ``notes`` say so. A scoring set at
    least ``SMALL_SET_FACTOR`` times smaller than the task's largest other scoring set is a
    warning (it weighs as much in the Dynascore). Raises ``RuleError`` for bad ratios.
    """
    task = round.task
    ratios, seed = _close_settings(task, ratios, seed)
    min_items = int(task.config.get("min_scoring_items") or DEFAULT_MIN_SCORING_ITEMS)
    validated = selectors.validated_queryset(round=round).count()
    sizes = split_sizes(validated, ratios)
    plan = small_split_plan(sizes, min_items=min_items)
    problems, notes, warnings = [], [], []
    at = f"at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}"
    if plan and not merge_small:
        for split in ("dev", "test"):
            if sizes[split] == 0 and min_items <= 1:
                problems.append(f"The {split} split would be empty: {_plural(validated, 'validated example')} {at}. "
                                "Validate more examples or change the ratios.")
            elif sizes[split] < min_items:
                problems.append(
                    f"The {split} set would hold {_plural(sizes[split], 'item')}, fewer than the minimum of {min_items} "
                    f"this task sets for a scoring set ({_plural(validated, 'validated example')} {at}). Validate more "
                    "examples, change the ratios, or merge the small scoring splits."
                )
    elif plan and validated == 0:
        problems.append("No validated example in this round: there is nothing to build datasets from.")
    elif plan:
        sizes = merged_sizes(sizes, plan)
        if plan == {"dev": "test"}:
            notes.append(f"Dev and test merge into one test set of {_plural(sizes['test'], 'item')} (each alone is below the "
                         f"minimum of {min_items}); no dev set is written for this round.")
        else:
            notes.append(f"Dev and test together hold fewer than {min_items} items: every validated example goes into "
                         "train, and this round adds no scoring set to the Dynascore.")
    largest = (Dataset.objects.filter(task=task, access=Dataset.Access.SCORING, item_count__gt=0)
               .exclude(round=round).order_by("-item_count").first())
    if largest is not None and not problems:
        for split in ("dev", "test"):
            if 0 < sizes[split] and sizes[split] * SMALL_SET_FACTOR <= largest.item_count:
                warnings.append(
                    f"The {split} set would hold {_plural(sizes[split], 'item')}, yet weigh in the Dynascore as much as "
                    f"{largest.name} ({_plural(largest.item_count, 'item')}); its score will be noisy. Consider validating "
                    "more, a larger minimum (Settings), or merging."
                )
    return RoundClosePreview(
        round=round, ratios=ratios, seed=seed, validated=validated, sizes=sizes,
        names={split: dataset_name(round, split) for split in SPLITS}, models=evaluable_models(task),
        problems=problems, closed=round.status == Round.Status.CLOSED, min_items=min_items,
        merge_small=merge_small, merges=plan, notes=notes, warnings=warnings,
    )


def close_round(
    *, round, acting_user, ratios=None, seed=None, open_next=False, next_loop="current", merge_small: bool = False,
) -> list[Dataset]:
    """Close ``round`` and build its train/dev/test datasets from its verified-correct examples.

    ``ratios``: ``{"train", "dev", "test"}`` summing to 1 (default the task's
    ``split_ratios``, else 0.8/0.1/0.1); ``seed``: default the task's ``split_seed``, else 0.
    The split is ``calculations.assign_splits`` (a hash of seed and example id: the same
    examples, ratios and seed always give the same split); it is written to
    ``Example.split`` and to three ``Dataset`` rows ``<task>-r<N>-train|dev|test`` (train
    ``standard`` with public labels; dev and test ``scoring`` with hidden labels) whose items carry
    ``input``, ``target`` (the final label of ``selectors.validated_examples``) and ``tag``.
    Writing the datasets sends ``leaderboard_inputs_changed``: every model is scored on them once
    the close commits.

    The round's crowd studies end with it (``annotation.crowd_setup.end_studies``).

    Safe to repeat: the round is claimed with a conditional UPDATE (``open`` → ``closed``), so of
    two concurrent or repeated closes exactly one builds the datasets; the other (and any close of
    a closed round) changes nothing and returns the round's existing datasets.

    ``open_next``: open round N+1 in the same step, with the closed round's active contexts and loop
    rule, and ``next_loop`` in the loop: ``"current"``
    (the closed round's models) or ``"retrained"`` (a model retrained on every validated example,
    ``request_retraining``; it takes the new round's loop when its training finishes).

    A dev or test split below the task's ``min_scoring_items`` refuses the close (``small_split``;
    ``empty_split`` when it would be empty), unless ``merge_small``: then the small scoring splits
    merge as ``preview_round_close`` shows (``calculations.small_split_plan``) and only the splits
    that keep items get a dataset.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task; ``RuleError`` for bad ratios, a
    small or empty dev or test split (nothing changes) or an unknown ``next_loop``.
    Returns the datasets written, in train, dev, test order.
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can close its rounds.")
    if next_loop not in NEXT_LOOP_CHOICES:
        raise RuleError(Code.BAD_NEXT_LOOP, f"next_loop must be one of {', '.join(NEXT_LOOP_CHOICES)}.", field="next_loop")
    preview = preview_round_close(round, ratios=ratios, seed=seed, merge_small=merge_small)
    ratios, seed = preview.ratios, preview.seed
    if preview.problems and not preview.closed:
        empty = [s for s in ("dev", "test") if preview.sizes[s] == 0]
        if empty and not merge_small:
            raise RuleError(
                Code.EMPTY_SPLIT,
                f"Round {round.number} was not closed: its {' and '.join(empty)} split{'s' if len(empty) > 1 else ''} would be empty "
                f"({preview.validated} validated examples at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}). "
                "Validate more examples, change the ratios" + (", or merge the small scoring splits." if preview.min_items > 1 else "."),
            )
        raise RuleError(Code.SMALL_SPLIT, f"Round {round.number} was not closed: " + " ".join(preview.problems))
    plan = preview.merges if merge_small else {}
    with transaction.atomic():
        claimed = Round.objects.filter(pk=round.pk, status=Round.Status.OPEN).update(status=Round.Status.CLOSED, end=timezone.now())
        if not claimed:
            existing = Dataset.objects.filter(round_id=round.pk, split__in=SPLITS, name__in=list(preview.names.values()))
            return sorted(existing, key=lambda d: SPLITS.index(d.split))
        round = Round.objects.select_related("task").get(pk=round.pk)
        crowd_setup.end_studies(round)  # its crowd studies end with it: workers get a page saying so
        closed_id = round.pk
        transaction.on_commit(lambda: round_status_changed.send(sender=Round, round_id=closed_id, status=str(Round.Status.CLOSED)))
        validated = selectors.validated_examples(round=round)
        examples = [v.example for v in validated]
        targets = {v.example.pk: v.target for v in validated}
        splits = assign_splits([e.pk for e in examples], ratios=ratios, seed=seed)
        splits = {pk: plan.get(split, split) for pk, split in splits.items()}
        empty = [s for s in ("dev", "test") if s not in plan and s not in set(splits.values())]
        if empty:
            raise RuleError(
                Code.EMPTY_SPLIT,
                f"Round {round.number} was not closed: its {' and '.join(empty)} split{'s' if len(empty) > 1 else ''} would be empty "
                f"({len(examples)} validated examples at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}). "
                "Validate more examples or change the ratios.",
            )
        Example.objects.filter(round=round).exclude(pk__in=list(splits)).exclude(split="").update(split="")
        datasets = []
        for split in SPLITS:
            if split in plan:
                continue
            chosen = [e for e in examples if splits[e.pk] == split]
            Example.objects.filter(pk__in=[e.pk for e in chosen]).exclude(split=split).update(split=split)
            items = [
                DatasetItem(
                    uid=f"e{e.pk}",
                    input=e.input,
                    target=targets[e.pk],
                    tag=e.tag or e.context.tag,
                    metadata={"example_id": e.pk, "context_uid": e.context.uid, "model_wrong": e.model_wrong},
                )
                for e in chosen
            ]
            access = Dataset.Access.STANDARD if split == "train" else Dataset.Access.SCORING
            description = (f"Verified-correct examples of {round}, {split} split "
                           f"(ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}, seed {seed}).")
            dataset, _ = Dataset.objects.update_or_create(
                task=task,
                name=dataset_name(round, split),
                defaults={"round": round, "split": split, "access": access, "description": description},
                create_defaults={
                    "round": round, "split": split, "access": access, "description": description,
                    "label_visibility": default_label_visibility(split=split, access=access),
                },
            )
            dataset.items.all().delete()
            for item in items:
                item.dataset = dataset
            DatasetItem.objects.bulk_create(items, batch_size=1000)
            record_dataset_content(dataset, source=f"round {round.number}, {split} split")
            datasets.append(dataset)
        if open_next:
            _open_next_round(round, acting_user=acting_user, next_loop=next_loop)
    return datasets


def _open_next_round(round: Round, *, acting_user, next_loop: str) -> Round:
    """Open round N+1 with the closed round's models in the loop, its loop rule and its active
    contexts carried over (as the console's "Open the next round" does by default: without them
    annotators could not write in it); with ``next_loop="retrained"`` also request a retrained model
    that takes that loop when its training finishes."""
    current = [m.pk for m in round.target_models.all()]
    new_round = open_round(task=round.task, acting_user=acting_user, target_model_ids=current, loop_rule=round.loop_rule,
                           contexts_from=round.number)
    if next_loop == "retrained":
        request_retraining(task=round.task, acting_user=acting_user, loop_of_round=new_round)
    return new_round
