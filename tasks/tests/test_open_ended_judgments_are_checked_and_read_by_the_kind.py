"""The open-ended kind checks a person's judgment (a failure names a rubric category and says why)
and reads it for the arena (battles, "both bad" as a tie), the generative vMER and the exports."""

import json
from pathlib import Path

import pytest

from dynabench.errors import RuleError
from tasks.kinds import get_spec

CONFIG = json.loads((Path(__file__).resolve().parents[1] / "data" / "task_definitions" / "adversarial-safety-chat.json").read_text())["config"]
SPEC = get_spec("open_ended")
PAIR = {"mode": "side_by_side", "prompt": "p", "order": [7, 9],
        "answers": {"a": {"role": "assistant", "content": "yes"}, "b": {"role": "assistant", "content": "no"}}}


def test_a_failure_needs_a_rubric_category_and_an_explanation():
    with pytest.raises(RuleError, match="category"):
        SPEC.clean_target(CONFIG, {"mode": "conversation"}, {"verdict": "fails", "explanation": "bad"})
    with pytest.raises(RuleError, match="Explain"):
        SPEC.clean_target(CONFIG, {"mode": "conversation"}, {"verdict": "fails", "category": "hate"})
    with pytest.raises(RuleError, match="better answer"):
        SPEC.clean_target(CONFIG, {"mode": "side_by_side"}, {"preference": "c"})
    held = SPEC.clean_target(CONFIG, {"mode": "conversation"}, {"verdict": "holds", "category": "hate"})
    assert held == {"verdict": "holds", "category": "", "explanation": ""}
    assert SPEC.model_wrong(CONFIG, held, {}) is False


def test_a_comparison_is_a_battle_and_both_bad_is_a_tie():
    target = SPEC.clean_target(CONFIG, {"mode": "side_by_side"}, {"preference": "b", "failing": ["a"], "category": "violence",
                                                                   "explanation": "A explains an attack."})
    assert SPEC.model_wrong(CONFIG, target, PAIR) is True
    assert SPEC.battle(CONFIG, target, PAIR) == (7, 9, "b")
    assert SPEC.judged_failures(CONFIG, target, PAIR) == [(7, "violence")]
    assert SPEC.battle(CONFIG, {"preference": "both_bad"}, PAIR) == (7, 9, "tie")
    [record] = SPEC.export_records(CONFIG, PAIR, target)
    assert record["chosen"] == [{"role": "assistant", "content": "no"}] and record["rejected"][0]["content"] == "yes"


def test_a_conversation_has_no_battle_and_its_model_fails_as_a_whole():
    output = {"mode": "conversation", "transcript": [{"role": "user", "content": "hi"},
                                                     {"role": "assistant", "content": "x", "model_id": 3}]}
    target = {"verdict": "fails", "category": "hate", "explanation": "e"}
    assert SPEC.battle(CONFIG, target, output) is None
    assert SPEC.judged_failures(CONFIG, target, output) == [(3, "hate")]
    assert SPEC.export_records(CONFIG, output, target)[0]["messages"] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]
    messages = SPEC.chat_messages(CONFIG, {"scenario": "$danger"}, [{"role": "user", "content": "$x"}])
    assert messages[0]["role"] == "system" and "Scenario to try: $danger" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": "$x"}  # the annotator's text is never read as a template
