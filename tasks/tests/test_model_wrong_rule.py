"""The task kind's model-wrong rule applies to the model's actual answer (no database)."""

from types import SimpleNamespace

from tasks.kinds import get_spec

NLI = SimpleNamespace(kind="classification", config={"model_wrong": {"rule": "label_differs"}})
QA = SimpleNamespace(kind="extractive_qa", config={"model_wrong": {"rule": "squad_f1_below", "threshold": 0.4}})
QA_DEFAULT = SimpleNamespace(kind="extractive_qa", config={"model_wrong": {"rule": "squad_f1_below"}})


def decide_model_wrong(task, target, output):
    return get_spec(task.kind).model_wrong(task.config, target, output)


def answers(text):
    return {"answers": [{"text": text, "answer_start": 0}]}


def test_decide_model_wrong_when_the_labels_differ():
    assert decide_model_wrong(NLI, {"label": "neutral"}, {"label": "entailment", "probs": {}}) is True


def test_decide_model_wrong_not_when_the_labels_agree():
    assert decide_model_wrong(NLI, {"label": "neutral"}, {"label": "neutral", "probs": {}}) is False


def test_decide_model_wrong_when_the_qa_answers_share_no_word():
    assert decide_model_wrong(QA, answers("in 1843"), {"answer": "Charles Babbage"}) is True


def test_decide_model_wrong_not_when_the_qa_answer_differs_only_by_articles_and_case():
    assert decide_model_wrong(QA, answers("The Analytical Engine"), {"answer": "analytical engine"}) is False


def test_decide_model_wrong_uses_the_threshold_at_its_edge():
    # F1("a b c d e", "a b") = 2 * (2/2 * 2/5) / (1 + 2/5) = 0.571...; "a b c d e f g h i j" vs "a b": 0.333...
    assert decide_model_wrong(QA, answers("x1 x2"), {"answer": "x1 x2 x3 x4 x5"}) is False
    assert decide_model_wrong(QA, answers("x1 x2"), {"answer": "x1 x2 x3 x4 x5 x6 x7 x8 x9 x10"}) is True


def test_decide_model_wrong_defaults_the_qa_threshold_to_0_4():
    # F1 = 2 * (1/4 * 1) / (1/4 + 1) = 0.4: not below 0.4, so not wrong
    assert decide_model_wrong(QA_DEFAULT, answers("x1"), {"answer": "x1 x2 x3 x4"}) is False
    # F1 = 2 * (1/5) / (1/5 + 1) = 0.333: wrong
    assert decide_model_wrong(QA_DEFAULT, answers("x1"), {"answer": "x1 x2 x3 x4 x5"}) is True
