"""Validators' own answers: on a kind whose target is a list of answers that people give (visual
question answering: VQA asks ten people each question, and its accuracy counts how many agree),
a validator may send their own answer to the question with a verdict
(``Validation.metadata["own_answer"]``), and the validated example's final target keeps every
one of them after the annotator's, up to the kind's ``spec.answers_wanted(config)`` (VQA: the
task's ``vqa_answers``, default 10), so a closed round's datasets carry them all.

- Only a counted vote gives an answer (a gold check or a vote that no longer counts does not),
  and a flag gives none: a flagged question is not one to answer.
- The answer is checked as the annotator's is (the kind's ``clean_target``): non-empty, short,
  more than punctuation.
- An example that already holds ``answers_wanted`` answers takes no more (400 ``answers_full``).
"""

from __future__ import annotations

from collections import defaultdict

from dynabench.errors import RuleError
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation

KEY = "own_answer"


def given_answer(*, counts: bool, gold_check: bool, metadata) -> str | None:
    """The answer one validation adds to its example's final target: its ``own_answer`` when the vote
    counts and is no gold check, else None (the export's SQL applies the same rule)."""
    answer = (metadata or {}).get(KEY) if counts and not gold_check else None
    return answer if isinstance(answer, str) else None


def _given(example_ids) -> dict[int, list[str]]:
    rows = (Validation.objects.filter(example_id__in=list(example_ids), counts=True, gold_check=False, metadata__has_key=KEY)
            .order_by("id").values_list("example_id", "metadata"))
    found: dict[int, list[str]] = defaultdict(list)
    for example_id, metadata in rows:
        answer = given_answer(counts=True, gold_check=False, metadata=metadata)
        if answer is not None:
            found[example_id].append(answer)
    return found


def answers_left(example) -> int:
    """How many more answers ``example`` takes from validators (0 for a kind that takes none): the
    kind's ``answers_wanted`` less the annotator's answers and those validators gave. One query."""
    spec, config = example.round.task.spec, example.round.task.config
    wanted = spec.answers_wanted(config)
    if wanted <= 0:
        return 0
    held = len((example.target or {}).get(spec.target_field) or []) + len(_given([example.pk]).get(example.pk, []))
    return max(0, wanted - held)


def with_given(task, target: dict, answers: list[str]) -> dict:
    """``target`` (an example's final target) with the validators' ``answers`` after its own, up to the
    kind's ``answers_wanted``; ``target`` itself when there are none or the kind takes none."""
    wanted = task.spec.answers_wanted(task.config)
    if wanted <= 0 or not answers or target is None:
        return target
    field = task.spec.target_field
    return {**target, field: [*(target.get(field) or []), *answers][:wanted]}


def clean_own_answer(*, example, label: str, value) -> str:
    """Return the validator's own answer to ``example``'s question, checked; raises ``RuleError``
    (``own_answer_not_taken`` when the task's kind takes none or the verdict is a flag,
    ``answers_full`` when the example holds its answers already, the kind's target code when the
    answer itself is not acceptable), each naming the field ``own_answer``."""
    task = example.round.task
    spec, config = task.spec, task.config
    wanted = spec.answers_wanted(config)
    if wanted <= 0:
        raise RuleError(Code.OWN_ANSWER_NOT_TAKEN, f"{task.name} takes no answers from validators; leave your answer out.", field=KEY)
    if label == "flagged":
        raise RuleError(Code.OWN_ANSWER_NOT_TAKEN, "A flagged example takes no answer: flag it without one.", field=KEY)
    if answers_left(example) <= 0:
        raise RuleError(Code.ANSWERS_FULL, f"This question already has its {wanted} answers; send your verdict without one.", field=KEY)
    try:
        cleaned = spec.clean_target(config, example.input, {spec.target_field: [value]})
    except RuleError as error:
        raise RuleError(error.code, error.message, field=KEY) from None
    return cleaned[spec.target_field][0]


def with_own_answers(task, found: list) -> dict[int, dict]:
    """``{example id: final target with validators' answers added}`` for the ``(example, target)``
    pairs in ``found`` (validated examples and their final targets), one query; an example's
    target is left out when no validator added an answer or the kind takes none."""
    if task.spec.answers_wanted(task.config) <= 0 or not found:
        return {}
    given = _given(example.pk for example, _ in found)
    return {example.pk: with_given(task, target, given[example.pk]) for example, target in found if given.get(example.pk)}
