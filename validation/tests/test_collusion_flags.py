"""``calculations.collusion_flags``: a pair of validators who agree with each other far more often
than with gold or with others is flagged; honest validators who agree because the examples
are clear are not."""

from validation.calculations import collusion_flags, shares_entry


def honest_votes(validators, examples, *, disagree_every=0):
    """Every validator votes the true label ``correct`` on each example, except that validator
    ``v`` says ``incorrect`` on example ``e`` when ``(e + v) % disagree_every == 0``."""
    return [(e, v, "incorrect" if disagree_every and (e + v) % disagree_every == 0 else "correct")
            for e in examples for v in validators]


def test_a_pair_that_always_agrees_while_failing_gold_and_the_crowd_is_flagged():
    votes = honest_votes([1, 2, 3], range(20))
    # Validators 8 and 9 vote together, against the crowd, on the same 10 examples.
    votes += [(e, v, "incorrect") for e in range(10) for v in (8, 9)]
    gold = [(8, False)] * 4 + [(8, True)] + [(9, False)] * 4 + [(9, True)] + [(v, True) for v in (1, 2, 3) for _ in range(5)]
    flags = collusion_flags(votes, gold)

    assert [(f.a, f.b) for f in flags] == [(8, 9)]
    flag = flags[0]
    assert flag.shared == 10 and flag.pair_agreement == 1.0 and flag.baseline < 0.3


def test_honest_validators_on_clear_examples_are_not_flagged():
    votes = honest_votes([1, 2, 3, 4], range(30), disagree_every=7)
    gold = [(v, True) for v in (1, 2, 3, 4) for _ in range(5)]
    assert collusion_flags(votes, gold) == []


def test_too_few_shared_examples_say_nothing():
    votes = [(e, v, "incorrect") for e in range(4) for v in (8, 9)] + honest_votes([1], range(4))
    assert collusion_flags(votes, [], min_shared=5) == []


def test_a_pair_with_no_other_evidence_has_baseline_zero_and_is_flagged():
    votes = [(e, v, "correct") for e in range(6) for v in (5, 6)]
    flags = collusion_flags(votes, [])
    assert [(f.a, f.b, f.baseline, f.comparisons) for f in flags] == [(5, 6, 0.0, 0)]


def test_entry_keys_overlap_only_when_both_have_one_in_common():
    assert shares_entry(frozenset({"a", "b"}), frozenset({"b"}))
    assert not shares_entry(frozenset({"a"}), frozenset({"b"}))
    assert not shares_entry(frozenset(), frozenset())
