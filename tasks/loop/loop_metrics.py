"""The models in the loop for ``/metrics``, read at each scrape: each open round's endpoint budget
used and its limits (``RoundSpend``), and for each endpoint model in the loop of an open round its
circuit breaker (shared cache) and its concurrency slots in use (Redis). Registered with
``dynabench.metrics.register_source``; models are labelled by id, bounded by the models in open
rounds' loops."""

from __future__ import annotations

from prometheus_client.core import GaugeMetricFamily

from tasks.models import MLModel, Round


def budgets():
    """``dynabench_round_budget_used`` and ``_limit`` per task, open round and unit (calls, tokens);
    a limit only where the round sets one."""
    used = GaugeMetricFamily("dynabench_round_budget_used", "What the round's endpoint models used (answered and "
                             "in flight), by unit.", labels=["task", "round", "unit"])
    limit = GaugeMetricFamily("dynabench_round_budget_limit", "The round's endpoint budget, by unit (absent: no limit).",
                              labels=["task", "round", "unit"])
    rows = Round.objects.filter(status=Round.Status.OPEN).values_list(
        "task__code", "number", "spend__calls", "spend__tokens", "endpoint_call_budget", "endpoint_token_budget")
    for task, number, calls, tokens, call_budget, token_budget in rows:
        for unit, value, most in (("calls", calls, call_budget), ("tokens", tokens, token_budget)):
            used.add_metric([task, str(number), unit], value or 0)
            if most is not None:
                limit.add_metric([task, str(number), unit], most)
    return [used, limit]


def endpoints():
    """Per endpoint model in the loop of an open round: its breaker (1 open, 0 closed) and its slots."""
    from tasks.loop.endpoints.breaker import breaker_state
    from tasks.loop.endpoints.slots import slots

    opened = GaugeMetricFamily("dynabench_model_breaker_open", "1 while the endpoint model's circuit breaker is open.",
                               labels=["model"])
    in_use = GaugeMetricFamily("dynabench_model_slots_in_use", "Calls in flight to the endpoint model (its shared "
                               "concurrency slots held).", labels=["model"])
    most = GaugeMetricFamily("dynabench_model_slots_limit", "The endpoint model's concurrency limit.", labels=["model"])
    models = (MLModel.objects.filter(kind=MLModel.Kind.ENDPOINT, rounds_in_loop__status=Round.Status.OPEN,
                                     endpoint__isnull=False).distinct().select_related("endpoint"))
    for model in models:
        label = [str(model.pk)]
        opened.add_metric(label, 1 if breaker_state(model)["open"] else 0)
        semaphore = slots(model.endpoint)
        in_use.add_metric(label, semaphore.holders())
        most.add_metric(label, semaphore.limit)
    return [opened, in_use, most]
