"""What a task kind asks an AI validator and how it reads the answer (``tasks/kinds/judge.py``): the
request carries what a human validator sees (the context's visible text, the annotator's fields and
answer, the model's answer) and the JSON wanted; the answer's first JSON object with a known verdict is
read (a fenced block's too, any case), and anything else is ``VerdictError``, never a crash."""

import pytest

from tasks.kinds import get_spec
from tasks.kinds.judge import REASON_MAX, VerdictError

CONFIG = {"labels": ["positive", "negative"], "context_fields": [{"name": "prompt", "label": "Prompt"},
                                                                {"name": "photo", "type": "image"}],
          "input_fields": [{"name": "text", "label": "Your sentence"}]}


def test_the_request_shows_what_a_validator_sees():
    messages = get_spec("classification").judge_messages(
        CONFIG, context_data={"prompt": "The soup", "photo": "secret/path.png"}, example_input={"text": "It was cold"},
        target={"label": "negative"}, model_output={"label": "positive", "probs": {}}, instructions="Be fair.")
    user = messages[1]["content"]
    assert "Prompt: The soup" in user and "Your sentence: It was cold" in user
    assert "The annotator's answer: negative" in user and "The model's answer: positive" in user
    assert "secret/path.png" not in user and '"verdict"' in user and "Be fair." in messages[0]["content"]


def test_a_qa_answer_is_shown_as_its_text():
    spec = get_spec("extractive_qa")
    user = spec.judge_messages({"input_fields": [{"name": "question"}]}, context_data={}, example_input={"question": "Who?"},
                               target={"answers": [{"text": "Ada", "answer_start": 0}]},
                               model_output={"answer": "Bob"})[1]["content"]
    assert "The annotator's answer: Ada" in user and "The model's answer: Bob" in user


@pytest.mark.parametrize("text, label, confidence", [
    ('{"verdict": "correct", "reason": "fits", "confidence": 0.8}', "correct", 0.8),
    ('Sure!\n```json\n{"verdict": " Incorrect ", "reason": "wrong label", "confidence": 7}\n```', "incorrect", 1.0),
    ('{"note": 1} then {"verdict": "flagged", "confidence": "high"}', "flagged", None),
])
def test_a_verdict_is_read(text, label, confidence):
    verdict = get_spec("classification").judge_verdict(CONFIG, text)
    assert (verdict.label, verdict.confidence) == (label, confidence)


@pytest.mark.parametrize("text", ["", "correct", '{"verdict": "maybe"}', "[1, 2]", '{"verdict": ' + "[" * 5000])
def test_anything_else_is_refused_with_a_reason(text):
    with pytest.raises(VerdictError):
        get_spec("classification").judge_verdict(CONFIG, text)


def test_a_long_reason_is_cut():
    verdict = get_spec("classification").judge_verdict(CONFIG, '{"verdict": "correct", "reason": "%s"}' % ("x" * 9000))
    assert len(verdict.reason) == REASON_MAX
