"""Every environment variable the platform reads has a row in docs/operate/configuration.md.

The variables are found by reading the platform's own code with ``ast`` (no import, no database):
``os.environ.get("X")``, ``os.environ["X"]``, ``os.getenv("X")``, ``"X" in os.environ``,
``os.environ.setdefault("X", ...)``, settings' ``_env_bool("X", ...)`` helper and
``dj_database_url.config()`` (``DATABASE_URL``), plus ``${X:-default}`` in ``scripts/run.sh``.
Tests, benchmarks and conftests are not the platform and are left out.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "operate" / "configuration.md"
SHELL_SCRIPTS = ("scripts/run.sh",)
_SKIPPED_DIRS = {"tests", "benchmarks", "migrations", "node_modules", "site", "var", "media", "static", "templates", "docs"}
_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|", re.MULTILINE)
_SHELL_DEFAULT = re.compile(r"\$\{([A-Z][A-Z0-9_]*):?[-=]")


def platform_modules() -> list[Path]:
    """Return the platform's Python modules: every ``.py`` under the checkout outside tests,
    benchmarks, migrations, hidden folders (the venv) and conftests."""
    modules = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in parts[:-1]):
            continue
        if path.name == "conftest.py" or path.name.startswith("test_"):
            continue
        modules.append(path)
    return modules


def _is_environ(node: ast.AST) -> bool:
    """``os.environ``, or a bare ``environ`` (a parameter defaulting to it, as in dynabench/wsgi.py)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def _constant(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def variables_in_source(source: str) -> set[str]:
    """Return the names of the environment variables ``source`` reads by a literal name."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            first = _constant(node.args[0]) if node.args else None
            if isinstance(func, ast.Attribute) and func.attr in {"get", "setdefault"} and _is_environ(func.value):
                found.add(first)
            elif isinstance(func, ast.Attribute) and func.attr == "getenv" and isinstance(func.value, ast.Name) and func.value.id == "os":
                found.add(first)
            elif isinstance(func, ast.Name) and re.fullmatch(r"_?env(_[a-z]+)?", func.id):
                found.add(first)
            elif isinstance(func, ast.Attribute) and func.attr == "config" and isinstance(func.value, ast.Name) and func.value.id == "dj_database_url":
                env = next((_constant(k.value) for k in node.keywords if k.arg == "env"), None)
                found.add(env or "DATABASE_URL")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            found.add(_constant(node.slice))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            if _is_environ(node.comparators[0]):
                found.add(_constant(node.left))
    found.discard(None)
    return found


def variables_read() -> dict[str, str]:
    """Return ``{variable: "path:first place it is read"}`` for the whole platform."""
    where: dict[str, str] = {}
    for path in platform_modules():
        source = path.read_text(encoding="utf-8")
        for name in sorted(variables_in_source(source)):
            where.setdefault(name, str(path.relative_to(ROOT)))
    for script in SHELL_SCRIPTS:
        for name in _SHELL_DEFAULT.findall((ROOT / script).read_text(encoding="utf-8")):
            where.setdefault(name, script)
    return where


def variables_documented() -> set[str]:
    """Return the variables that have a row (first cell in backquotes) in the reference's tables."""
    return set(_ROW.findall(REFERENCE.read_text(encoding="utf-8")))


def test_every_variable_the_platform_reads_has_a_row_in_the_configuration_reference():
    undocumented = {name: where for name, where in variables_read().items() if name not in variables_documented()}

    assert not undocumented, "no row in docs/operate/configuration.md for: " + ", ".join(
        f"{name} (read in {where})" for name, where in sorted(undocumented.items())
    )


def test_the_scan_finds_each_way_of_reading_a_variable():
    source = """
import os
a = os.environ.get("A")
b = os.environ["B"]
c = os.getenv("C", "1")
d = "D" in os.environ
os.environ.setdefault("E", "x")
f = _env_bool("F", False)
os.environ["WRITTEN"] = "1"
g = dj_database_url.config(default="sqlite://")
def h(environ=os.environ):
    return environ.get("H")
"""
    assert variables_in_source(source) == {"A", "B", "C", "D", "E", "F", "DATABASE_URL", "H"}
