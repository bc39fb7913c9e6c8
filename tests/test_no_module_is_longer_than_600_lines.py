"""A module holds one concern: none outside migrations, tests and benchmarks is longer than 600
lines (a longer one is split by concern, one orchestrator calling one module per rule)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("dynabench", "tasks", "annotation", "validation", "leaderboard", "console", "cycle", "community", "dynabench_client")
LIMIT = 600


def test_no_module_is_longer_than_600_lines():
    long = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or "tests" in parts or path.name.startswith("test_"):
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMIT:
                long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, "split these by concern:\n" + "\n".join(long)
