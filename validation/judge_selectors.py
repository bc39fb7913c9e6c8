"""A round's AI validators measured against people: one read for the console's dashboard and
``GET /api/v1/rounds/{id}/judge`` (``validation/api_views.py``).

``judge_report(round)`` compares, on the round's examples people settled:

- each AI validator that voted (its parsed votes) with the consensus (the example's settled state:
  verified correct → ``correct``, verified incorrect → ``incorrect``, flagged → ``flagged``), and on gold
  items with the owner's verdict;
- each person who validated with the majority of the *other* people's counted votes on the same example
  (``judge_agreement.leave_one_out_reference``: a person's own vote is part of the consensus, so it is
  left out), and their gold checks with the gold verdict.

The figures are ``judge_agreement.rater_agreement``'s (accuracy and Cohen's κ with 95 % bootstrap
intervals, per label and overall, and the confusion matrix); the judge's disagreements with the consensus
are listed with its reason. Computed once per change of the round's votes (cached by their counts).
"""

from __future__ import annotations

import dataclasses

from django.core.cache import cache
from django.db.models import Max

from annotation.models import Example, RoundTally, ValidationState
from validation.judge_agreement import leave_one_out_reference, rater_agreement
from validation.judge_models import AIVote, RoundJudge
from validation.models import GoldItem, Validation

LABELS = ["correct", "incorrect", "flagged"]
#: The example states people settled, as a verdict.
SETTLED = {ValidationState.VERIFIED_CORRECT: "correct", ValidationState.VERIFIED_INCORRECT: "incorrect",
           ValidationState.FLAGGED: "flagged"}
#: The most disagreements listed per judge.
DISAGREEMENTS_SHOWN = 50
CACHE_S = 300


def judge_report(round, *, seed: int = 0) -> dict:
    """The round's judge figures (see the module docstring)::

        {"round": id, "judge": {"model_id", "model", "enabled"} | None, "settled": n,
         "judges": [{"model_id", "model", "votes", "unparsed", "tokens", "vs_consensus": figures,
                     "vs_gold": figures, "disagreements": [{"example_id", "judge", "consensus", "reason"}]}],
         "validators": [{"validator_id", "validator", "vs_consensus": figures, "vs_gold": figures}],
         "ab": ab_comparison(...)}

    ``figures`` is ``rater_agreement``'s dict; intervals are seeded by ``seed``. Cached by the round's
    vote counts and latest ids, so a new vote or validation gives new figures at once."""
    key = _cache_key(round, seed)
    report = cache.get(key)
    if report is None:
        report = _compute(round, seed)
        cache.set(key, report, CACHE_S)
    return report


def has_judge(round) -> bool:
    """Whether ``round`` has, or had, an AI validator: a judge set or a vote cast (two indexed lookups). The
    round dashboard shows the judge's figures only then."""
    return RoundJudge.objects.filter(round=round).exists() or AIVote.objects.filter(round=round).exists()


def _cache_key(round, seed: int) -> str:
    """The round's latest AI vote and its running tally (``annotation.counters``: validations recorded, examples
    per state), which every new vote, validation or decision changes: three index lookups, whatever the round's size."""
    ai = AIVote.objects.filter(round=round).aggregate(last=Max("id"))["last"]
    tally = RoundTally.objects.filter(round=round).values_list(
        "validations", "pending", "verified_correct", "verified_incorrect", "flagged", "retracted").first()
    return f"judge-report:{round.pk}:{ai}:{':'.join(map(str, tally or ()))}:{seed}"


def _compute(round, seed: int) -> dict:
    settled = dict(Example.objects.filter(round=round, retracted=False, validation_state__in=list(SETTLED))
                   .values_list("pk", "validation_state"))
    consensus = {pk: SETTLED[state] for pk, state in settled.items()}
    gold = dict(GoldItem.objects.filter(round=round).values_list("example_id", "verdict"))
    current = RoundJudge.objects.select_related("model").filter(round=round).first()
    judges = []
    votes = AIVote.objects.filter(round=round).select_related("model").order_by("model_id", "example_id")
    by_model: dict[int, list[AIVote]] = {}
    for vote in votes:
        by_model.setdefault(vote.model_id, []).append(vote)
    for model_id, rows in by_model.items():
        parsed = [v for v in rows if v.parsed]
        pairs = [(v.label, consensus[v.example_id]) for v in parsed if v.example_id in consensus]
        disagreements = [{"example_id": v.example_id, "judge": v.label, "consensus": consensus[v.example_id],
                          "reason": v.reason} for v in parsed if v.example_id in consensus and v.label != consensus[v.example_id]]
        judges.append({
            "model_id": model_id, "model": rows[0].model.name, "votes": len(rows), "unparsed": len(rows) - len(parsed),
            "tokens": sum(v.prompt_tokens + v.completion_tokens for v in rows),
            "vs_consensus": rater_agreement(pairs, LABELS, seed=seed),
            "vs_gold": rater_agreement([(v.label, gold[v.example_id]) for v in parsed if v.example_id in gold], LABELS,
                                       seed=seed),
            "disagreements": disagreements[:DISAGREEMENTS_SHOWN],
        })
    return {
        "round": round.pk,
        "judge": ({"model_id": current.model_id, "model": current.model.name, "enabled": current.enabled}
                  if current else None),
        "settled": len(consensus),
        "judges": judges,
        "validators": _people(round, consensus, gold, seed),
        "ab": ab_comparison(round, consensus, gold, seed=seed),
    }


def ab_comparison(round, consensus: dict, gold: dict, *, seed: int = 0) -> list[dict] | None:
    """The judge's A/B split compared, arm by arm (``policy``: under the round's judge policy;
    ``control``: without), over the examples its votes put in an arm; None when no vote has an arm.

    Per arm: ``examples``, ``settled``, and means with 95 % bootstrap intervals
    (``annotation.calculations.mean_interval``, ``{"n", "mean", "low", "high"}``): ``validations``
    (people's counted votes per settled example, gold checks left out), ``hours_to_settle`` (from the
    example's creation to the last of people's votes on it, settled examples), ``gold_agreement`` (1 when
    a gold item's settled state matches the owner's verdict, else 0) and ``tokens`` (the judge's tokens per
    example: its cost)."""
    from annotation.calculations import mean_interval

    votes = list(AIVote.objects.filter(round=round).exclude(arm="").values_list(
        "example_id", "arm", "prompt_tokens", "completion_tokens", "example__created_at"))
    if not votes:
        return None
    last_vote: dict[int, object] = {}
    counted: dict[int, int] = {}
    for example_id, created_at in (Validation.objects.filter(example__round=round, gold_check=False, counts=True)
                                   .values_list("example_id", "created_at")):
        counted[example_id] = counted.get(example_id, 0) + 1
        last_vote[example_id] = max(created_at, last_vote.get(example_id, created_at))
    arms = []
    for arm in ("policy", "control"):
        rows = [v for v in votes if v[1] == arm]
        settled = [v for v in rows if v[0] in consensus]
        hours = [(last_vote[v[0]] - v[4]).total_seconds() / 3600 for v in settled if v[0] in last_vote]
        agree = [float(consensus[v[0]] == gold[v[0]]) for v in settled if v[0] in gold]

        def interval(values):
            return dataclasses.asdict(mean_interval(values, seed=seed))

        arms.append({"arm": arm, "examples": len(rows), "settled": len(settled),
                     "validations": interval([counted.get(v[0], 0) for v in settled]),
                     "hours_to_settle": interval(hours), "gold_agreement": interval(agree),
                     "tokens": interval([v[2] + v[3] for v in rows])})
    return arms


def _people(round, consensus: dict, gold: dict, seed: int) -> list[dict]:
    rows = (Validation.objects.filter(example__round=round, mode=Validation.Mode.USER)
            .values_list("example_id", "validator_id", "validator__username", "label", "counts", "gold_check"))
    per_example: dict[int, list[tuple[int, str]]] = {}
    names: dict[int, str] = {}
    mine: dict[int, list[tuple[int, str]]] = {}
    checks: dict[int, list[tuple[str, str]]] = {}
    for example_id, who, name, label, counts, gold_check in rows:
        names[who] = name
        if gold_check:
            if example_id in gold:
                checks.setdefault(who, []).append((label, gold[example_id]))
            continue
        if counts and example_id in consensus:
            per_example.setdefault(example_id, []).append((who, label))
            mine.setdefault(who, []).append((example_id, label))
    people = []
    for who in sorted(names, key=lambda w: names[w]):
        pairs = []
        for example_id, label in mine.get(who, []):
            reference = leave_one_out_reference(per_example[example_id], who)
            if reference is not None:
                pairs.append((label, reference))
        people.append({"validator_id": who, "validator": names[who],
                       "vs_consensus": rater_agreement(pairs, LABELS, seed=seed),
                       "vs_gold": rater_agreement(checks.get(who, []), LABELS, seed=seed)})
    return people
