"""Fixtures for open-ended (generative) tasks: the built-in safety chat task created from its
definition file, with two endpoint models of the local OpenAI-compatible server in the loop."""

import json
from pathlib import Path

import pytest

DEFINITIONS = Path(__file__).resolve().parents[1] / "tasks" / "data" / "task_definitions"


@pytest.fixture
def chat_task(db, make_endpoint_model, settings):
    """``adversarial-safety-chat`` (one validation settles a judgment) with published endpoint models
    ``alpha`` and ``beta`` in round 1's loop (so on its arena); ``chat_task.loop`` lists them."""
    from dynabench.roles import ensure_role_groups
    from tasks.data.seed import create_task

    ensure_role_groups()
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    definition = json.loads((DEFINITIONS / "adversarial-safety-chat.json").read_text())
    definition["config"]["validations_needed"] = 1
    task, _ = create_task(definition)
    alpha = make_endpoint_model(task, name="alpha", params={"temperature": 0, "max_tokens": 6}, published=True)
    beta = make_endpoint_model(task, name="beta", params={"temperature": 0, "max_tokens": 4}, published=True)
    task.current_round().target_models.add(alpha, beta)
    task.loop = [alpha, beta]
    return task
