"""The import-linter contracts (``.importlinter``) hold: apps import only the layers below them,
``dynabench`` imports no app, the client imports no app and no Django. A lower layer that
imports a higher one, even inside a function, fails this test (and ``make lint`` in CI)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_every_contract_is_kept():
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    contracts = (ROOT / ".importlinter").read_text().count("[importlinter:contract:")
    assert f"Contracts: {contracts} kept, 0 broken." in result.stdout


def test_no_contract_ignores_an_import():
    config = (ROOT / ".importlinter").read_text()
    assert "ignore_imports" not in config
    assert "type = layers" in config


def test_an_upward_import_inside_a_function_breaks_the_layers(tmp_path):
    """The project's own contracts, run over a copy of the root packages reduced to empty
    modules plus one function-local upward import (the working tree is left untouched)."""
    config = (ROOT / ".importlinter").read_text()
    for package in ("dynabench", "tasks", "annotation", "validation", "leaderboard", "console", "cycle", "community", "releases",
                    "dynabench_client"):
        assert f"    {package}\n" in config
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for package in ("loop", "data", "metrics", "kinds"):  # the tasks modules that contracts name
        (tmp_path / "tasks" / package).mkdir()
        (tmp_path / "tasks" / package / "__init__.py").write_text("")
    (tmp_path / "tasks" / "models.py").write_text("")
    (tmp_path / "validation" / "selectors.py").write_text("")
    (tmp_path / "tasks" / "probe.py").write_text("def later():\n    from validation import selectors\n\n    return selectors\n")
    (tmp_path / ".importlinter").write_text(config)
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": str(LINT_IMPORTS.parent), "PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tasks.probe -> validation.selectors" in result.stdout


def test_the_console_sits_on_top_beside_the_cycle():
    """The owner's console is above every app (like Django's admin) and independent of ``cycle``,
    ``community`` (notifications) and ``releases`` (dataset releases), which sit beside it."""
    config = (ROOT / ".importlinter").read_text()
    assert "layers =\n    console | cycle | community | releases\n    leaderboard\n" in config
