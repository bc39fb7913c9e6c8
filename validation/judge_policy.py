"""When an AI validator's vote counts toward consensus (the round's ``RoundJudge.policy``).

- ``off`` (the default): never.
- ``one_vote``: the judge's vote is one more counted vote (``consensus.settle_example`` adds it).
- ``triage``: an example the judge is confident about (``confidence >= triage_confidence``) needs one
  human vote fewer; the AI vote itself is not a vote.

Either holds only while the judge is ``counting``: ``check_counting`` measures its Cohen's κ against the
consensus (``judge_kappa``, as ``judge_selectors.judge_report`` does) and lets it count once at least ``min_settled`` examples
people settled carry its vote and κ is above ``kappa_threshold``; when κ falls below, it stops counting
and ``counting_reason`` tells the owner (the AI help page and the round dashboard show it).

A vote's ``counted_as`` is decided when it is cast (``mark_votes``). Switching the policy, or the judge
ceasing to count, clears it only on examples still pending (``release_pending``) and recomputes their
consensus: a settled example is never rewritten. With the round's A/B split, only the ``policy`` arm's
examples (``judge_agreement.policy_arm``) are under the policy.
"""

from __future__ import annotations

from django.db import transaction
from django.template.defaultfilters import floatformat
from django.utils import timezone

from annotation.models import Example, ValidationState
from validation import consensus
from validation.judge_agreement import policy_arm
from validation.judge_models import AIVote, RoundJudge
from validation.judge_selectors import LABELS, SETTLED


def check_counting(judge: RoundJudge) -> bool:
    """Decide and save whether ``judge``'s votes may count now; return it. Off: False. Otherwise κ (point
    estimate) of its parsed votes against the consensus must exceed ``kappa_threshold`` on at least
    ``min_settled`` settled examples. When it stops counting, ``release_pending`` runs."""
    if judge.policy == RoundJudge.Policy.OFF:
        counting, reason = False, "The policy is off: AI votes do not count."
    else:
        n, kappa = judge_kappa(judge)
        if n < judge.min_settled:
            counting, reason = False, (f"Not counting yet: {n} of the {judge.min_settled} settled examples with its vote "
                                       "needed to trust its κ.")
        elif kappa is None or kappa <= judge.kappa_threshold:
            shown = "undefined" if kappa is None else _two_places(kappa)
            counting, reason = False, (f"Not counting: its κ against people is {shown} on {n} settled examples, not above "
                                       f"the threshold {_two_places(judge.kappa_threshold)}.")
        else:
            counting, reason = True, (f"Counting: its κ against people is {_two_places(kappa)} on {n} settled examples, above "
                                      f"the threshold {_two_places(judge.kappa_threshold)}.")
    was = judge.counting
    RoundJudge.objects.filter(pk=judge.pk).update(counting=counting, counting_reason=reason, checked_at=timezone.now())
    judge.counting, judge.counting_reason = counting, reason
    if was and not counting:
        release_pending(judge.round)
    return counting


def _two_places(x: float) -> str:
    """``x`` to two places as the round dashboard's table shows κ (Django's ``floatformat``: half up), so that
    the card's sentence and the table never differ on one κ (``f"{0.625:.2f}"`` is 0.62, the table's 0.63)."""
    return str(floatformat(x, 2))


def judge_kappa(judge: RoundJudge) -> tuple[int, float | None]:
    """``(n, κ)`` of ``judge``'s parsed votes against the consensus on its round's settled examples (κ:
    scikit-learn's ``cohen_kappa_score``; None when undefined). One query."""
    from sklearn.metrics import cohen_kappa_score

    pairs = [(label, SETTLED[state]) for label, state in AIVote.objects.filter(
        round_id=judge.round_id, model_id=judge.model_id, parsed=True, example__retracted=False,
        example__validation_state__in=list(SETTLED)).values_list("label", "example__validation_state")]
    if not pairs or len({x for pair in pairs for x in pair}) < 2:
        return len(pairs), None
    kappa = float(cohen_kappa_score([g for _, g in pairs], [r for r, _ in pairs], labels=LABELS))
    return len(pairs), None if kappa != kappa else kappa


def counted_as(judge: RoundJudge, vote: AIVote) -> str:
    """How ``vote`` (just cast, parsed or not) counts under ``judge``'s policy now: ``""``, ``vote`` or ``triage``."""
    if not vote.parsed or not judge.counting or vote.arm == "control":
        return AIVote.CountedAs.NOT
    if judge.policy == RoundJudge.Policy.ONE_VOTE:
        return AIVote.CountedAs.VOTE
    if judge.policy == RoundJudge.Policy.TRIAGE and vote.confidence is not None and vote.confidence >= judge.triage_confidence:
        return AIVote.CountedAs.TRIAGE
    return AIVote.CountedAs.NOT


def arm_of(judge: RoundJudge, example_id: int) -> str:
    """The example's arm under ``judge``'s A/B split (``""`` without one)."""
    return policy_arm(secret=judge.round.secret, example_id=example_id) if judge.ab_split else ""


def mark_votes(judge: RoundJudge, votes: list[AIVote]) -> int:
    """Set ``arm`` and ``counted_as`` on ``votes`` (not yet saved) under ``judge``'s policy; return how many count.
    Only votes on examples still pending may count (a settled example is never rewritten)."""
    pending = set(Example.objects.filter(pk__in=[v.example_id for v in votes], validation_state=ValidationState.PENDING)
                  .values_list("pk", flat=True))
    n = 0
    for vote in votes:
        vote.arm = arm_of(judge, vote.example_id)
        vote.counted_as = counted_as(judge, vote) if vote.example_id in pending else AIVote.CountedAs.NOT
        n += bool(vote.counted_as)
    return n


def resettle(example_ids) -> None:
    """Recompute the consensus of ``example_ids`` (rows locked in id order), e.g. after a vote of theirs
    started or stopped counting."""
    with transaction.atomic():
        examples = (Example.objects.select_for_update(of=("self",)).filter(pk__in=sorted(set(example_ids)))
                    .select_related("round__task").order_by("pk"))
        for example in examples:
            consensus.settle_example(example)


def release_pending(round) -> int:
    """Make the AI votes of ``round``'s pending examples stop counting, and recompute those examples;
    return how many. Settled examples keep what counted when they were settled."""
    ids = list(AIVote.objects.filter(round=round, example__validation_state=ValidationState.PENDING)
               .exclude(counted_as=AIVote.CountedAs.NOT).values_list("example_id", flat=True))
    if ids:
        AIVote.objects.filter(round=round, example_id__in=ids).update(counted_as=AIVote.CountedAs.NOT)
        resettle(ids)
    return len(ids)
