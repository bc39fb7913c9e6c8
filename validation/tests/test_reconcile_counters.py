"""reconcile_counters agrees with the counters kept by record_validation, and repairs drift."""

import random

from django.core.management import call_command

from annotation.models import Example
from tasks.models import Context
from validation.jobs import reconcile_counters
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def test_counters_agree_after_a_mixed_workload_and_drift_is_repaired(sentiment_task, annotator, owner):
    rng = random.Random(5)
    people = [make_user(f"w{i}", "validator") for i in range(6)]
    examples = [make_example(sentiment_task, annotator, model_wrong=rng.random() < 0.7) for _ in range(25)]
    for context in Context.objects.all():  # as the create page bumps it, one per example written
        context.times_used = context.examples.count()
        context.save()
    for e in examples:
        for person in rng.sample(people, rng.randint(0, 5)):
            label = rng.choice(["correct", "correct", "incorrect", "flagged"])
            e.refresh_from_db()
            if e.validation_state != "pending":
                break
            record_validation(example=leased(e, person), validator=person, label=label, metadata={"flag_reason": "odd"} if label == "flagged" else None)
        if rng.random() < 0.2:
            record_validation(example=e, validator=owner, label=rng.choice(["correct", "incorrect"]), mode="owner")

    assert call_command("reconcile_counters", "--dry-run").startswith("checked 25 examples: 0 drifted")

    Example.objects.filter(pk=examples[0].pk).update(correct_count=99, validation_state="flagged")
    Context.objects.filter(pk=examples[0].context_id).update(times_used=1000)
    # the round's tally (pending/flagged columns), the author's (settled) and two vote buckets
    # (one pending example fewer, one settled example more) drifted
    assert reconcile_counters(fix=False).endswith("4 drifted (not fixed)")
    assert "1 drifted (fixed)" in call_command("reconcile_counters")
    assert reconcile_counters(fix=False) == (
        "checked 25 examples: 0 drifted (not fixed); checked 20 contexts: 0 drifted (not fixed); "
        "checked the tallies of 4 rounds: 0 drifted (not fixed)"
    )
