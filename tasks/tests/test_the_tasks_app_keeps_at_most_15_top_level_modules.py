"""The tasks app stays a house with rooms: at most 15 modules at its top level; the rest lives in
its subpackages by concern (kinds/, loop/, data/, metrics/)."""

from pathlib import Path

TASKS = Path(__file__).resolve().parent.parent


def test_the_tasks_app_keeps_at_most_15_top_level_modules():
    modules = sorted(path.name for path in TASKS.glob("*.py"))
    assert len(modules) <= 15, modules
