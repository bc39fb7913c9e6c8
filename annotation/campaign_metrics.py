"""A campaign's own figures for ``/metrics``, read at each scrape from the running tallies
(``RoundTally``, changed in the same transaction as each example and validation): examples written,
fooling, validated and validations per task and open round. One indexed query per scrape; the
create page pays nothing for them. Registered with ``dynabench.metrics.register_source``."""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily

from tasks.models import Round

_FIGURES = (
    # (metric name without _total, help, tally field, extra label)
    ("dynabench_examples_written", "Examples written in the round, not retracted (a retraction shows as a reset).",
     "tally__collected", None),
    ("dynabench_examples_fooling", "Examples of the round that fooled the model in the loop.", "tally__fooled", None),
    ("dynabench_examples_validated", "Examples of the round settled by validation, by outcome.", "tally__verified_correct",
     ("outcome", "correct")),
    ("dynabench_examples_validated", None, "tally__verified_incorrect", ("outcome", "incorrect")),
    ("dynabench_examples_validated_fooling", "Examples that fooled the model and were validated correct (vMER's numerator).",
     "tally__verified_fooled", None),
    ("dynabench_validations", "Validations recorded in the round, every mode.", "tally__validations", None),
)


def campaign():
    """Counter families per task code and round number of every open round (0 before its first example)."""
    fields = [field for _, _, field, _ in _FIGURES]
    rows = Round.objects.filter(status=Round.Status.OPEN).values_list("task__code", "number", *fields)
    families: dict[str, CounterMetricFamily] = {}
    for name, help_text, _, extra in _FIGURES:
        if name not in families:
            labels = ["task", "round"] + ([extra[0]] if extra else [])
            families[name] = CounterMetricFamily(name, help_text, labels=labels)
    for task, number, *values in rows:
        for (name, _, _, extra), value in zip(_FIGURES, values):
            families[name].add_metric([task, str(number)] + ([extra[1]] if extra else []), value or 0)
    return list(families.values())
