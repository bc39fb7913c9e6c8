"""The model-wrong rule, without the ORM.

Kiela et al., "Dynabench: Rethinking Benchmarking in NLP" (NAACL 2021), section 3: an
example "fools" the model in the loop when the model's answer is wrong by the task's
rule. DESIGN.md fixes the two rules used here:

- classification (``{"rule": "label_differs"}``): the model's label differs from the
  annotator's label;
- extractive QA (``{"rule": "squad_f1_below", "threshold": t}``): the SQuAD word-level F1
  between the model's answer and the annotator's answer (best over the annotator's
  answers) is below ``t`` (0.4 when the config does not say).
"""

from tasks.metrics import best_over_ground_truths, squad_f1

DEFAULT_QA_THRESHOLD = 0.4


def qa_threshold(config: dict) -> float:
    """Return the task's SQuAD-F1 threshold below which a QA model counts as wrong."""
    return float(config.get("model_wrong", {}).get("threshold", DEFAULT_QA_THRESHOLD))


def qa_answer_f1(*, target: dict, model_output: dict) -> float:
    """Return the best SQuAD word F1 in [0, 1] of the model's answer against the target's answers.

    ``target`` is ``{"answers": [{"text", "answer_start"}, ...]}``; ``model_output`` is
    ``{"answer": str, ...}``.
    """
    truths = [a["text"] for a in target.get("answers", [])]
    return best_over_ground_truths(squad_f1, str(model_output.get("answer", "")), truths)


def decide_model_wrong(task, target: dict, model_output: dict) -> bool:
    """Return True when ``model_output`` is wrong for ``target`` under ``task``'s model-wrong rule.

    ``task`` needs only ``config`` (a ``Task`` or anything with that attribute).
    Classification: ``model_output["label"] != target["label"]``.
    Extractive QA: ``qa_answer_f1(...) < qa_threshold(config)``.
    Raises ``ValueError`` for a rule it does not know (the config schema forbids one).
    """
    rule = task.config["model_wrong"]["rule"]
    if rule == "label_differs":
        return model_output.get("label") != target["label"]
    if rule == "squad_f1_below":
        return qa_answer_f1(target=target, model_output=model_output) < qa_threshold(task.config)
    raise ValueError(f"unknown model-wrong rule {rule!r}")


def span_matches_passage(passage: str, *, text: str, start: int) -> bool:
    """Return True when ``text`` is exactly ``passage[start:start + len(text)]`` (and non-empty)."""
    return bool(text) and 0 <= start and passage[start:start + len(text)] == text
