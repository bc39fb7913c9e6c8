#!/usr/bin/env python3
"""Refuse tests whose verdict depends on the machine's speed (``make lint`` runs this; so does CI).

A test that waits for background work must wait for the work's own completion signal (a job's
status, a run's state, a database row) with a generous ceiling that only catches a hang; timings
live in ``benchmarks/``. This reads every test module (``test_*.py``, ``conftest.py`` and the
modules of ``tests/`` folders) with Python's ``ast`` and reports, as ``path:line: message``:

1. an ``assert`` (or a ``self.assert...`` call) on a clock reading: a call of ``time.time``,
   ``time.monotonic``, ``time.perf_counter``, ``time.process_time`` (or their ``_ns`` forms), or a
   name computed from one by arithmetic (``elapsed = time.monotonic() - started``);
2. a pause used as a verdict: ``time.sleep(...)``/``sleep(...)``/``asyncio.sleep(...)`` or
   Playwright's ``page.wait_for_timeout(...)`` outside a loop (inside a ``while``/``for`` it is
   the pause between two polls of a completion signal, which is fine).

A line that must keep such a call for another reason (a pause that only makes a race likely,
say) carries ``# clock-ok: <why>``; the reason is required.

Usage: ``scripts/check_test_clocks.py [PATH ...]`` (default: the repository). Exits 1 and lists
the findings when there are any, 0 otherwise.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".venv", "var", "node_modules", ".git", "__pycache__", "benchmarks"}
CLOCKS = {"time", "monotonic", "perf_counter", "process_time", "time_ns", "monotonic_ns", "perf_counter_ns", "process_time_ns"}
PAUSES = {"sleep", "wait_for_timeout"}
# Calls a clock reading may pass through and still be a clock reading.
PASS_THROUGH = {"round", "abs", "min", "max", "float", "int", "timedelta"}
ALLOW = re.compile(r"#\s*clock-ok:\s*\S")


def is_test_module(path: Path) -> bool:
    """True for ``test_*.py``, ``conftest.py`` and any module inside a ``tests`` folder."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.name == "conftest.py" or "tests" in path.parts)


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


def _is_clock_call(node: ast.AST) -> bool:
    """``time.monotonic()``, ``perf_counter()`` (imported from time), ...: not ``timezone.now()``."""
    if not isinstance(node, ast.Call) or _call_name(node) not in CLOCKS:
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return isinstance(func.value, ast.Name) and func.value.id == "time"
    return func.id != "time" or not node.args  # a bare ``time()`` from ``from time import time``


class _Checker(ast.NodeVisitor):
    def __init__(self, path: Path, lines: list[str]):
        self.path, self.lines = path, lines
        self.findings: list[str] = []
        self.clock_names: list[set[str]] = [set()]  # per function scope
        self.loop_depth = [0]

    # -- clock readings ---------------------------------------------------------------------
    def _reads_clock(self, node: ast.AST) -> bool:
        """Whether ``node`` is a clock reading, or arithmetic on one (through ``PASS_THROUGH`` calls)."""
        if _is_clock_call(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.clock_names[-1]
        if isinstance(node, ast.BinOp):
            return self._reads_clock(node.left) or self._reads_clock(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._reads_clock(node.operand)
        if isinstance(node, ast.Call) and _call_name(node) in PASS_THROUGH:
            return any(self._reads_clock(arg) for arg in node.args)
        return False

    def _mentions_clock(self, node: ast.AST) -> bool:
        """Whether any part of the expression ``node`` is a clock reading."""
        return any(self._reads_clock(sub) for sub in ast.walk(node))

    def _report(self, node: ast.AST, message: str) -> None:
        line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
        if not ALLOW.search(line):
            self.findings.append(f"{self.path}:{node.lineno}: {message}")

    def _function(self, node):
        self.clock_names.append(set())
        self.loop_depth.append(0)
        self.generic_visit(node)
        self.loop_depth.pop()
        self.clock_names.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._reads_clock(node.value):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self.clock_names[-1].add(name.id)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None and self._reads_clock(node.value) and isinstance(node.target, ast.Name):
            self.clock_names[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if self._reads_clock(node.value):
            self.clock_names[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        if self._mentions_clock(node.test):
            self._report(node, "asserts on elapsed time (a clock reading); wait for the work's completion signal "
                               "with a ceiling that only catches a hang, and measure speed in benchmarks/")
        self.generic_visit(node)

    # -- pauses -----------------------------------------------------------------------------
    def _loop(self, node):
        self.loop_depth[-1] += 1
        self.generic_visit(node)
        self.loop_depth[-1] -= 1

    visit_While = visit_For = visit_AsyncFor = _loop

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name and name.startswith("assert") and isinstance(node.func, ast.Attribute) \
                and any(self._mentions_clock(arg) for arg in node.args):
            self._report(node, f"{name}() on elapsed time (a clock reading); wait for the work's completion signal instead")
        if name in PAUSES and self.loop_depth[-1] == 0:
            self._report(node, f"{name}() outside a polling loop: a pause used as a verdict; wait for the work's "
                               "own completion signal (a job's status, a row, a page element), or mark the line "
                               "'# clock-ok: <why>' if the pause decides nothing")
        self.generic_visit(node)


def check_source(source: str, path: Path | str = "<snippet>") -> list[str]:
    """Findings (``path:line: message``) of one module's source; raises ``SyntaxError`` on bad Python."""
    tree = ast.parse(source, filename=str(path))
    checker = _Checker(Path(path), source.splitlines())
    checker.visit(tree)
    return checker.findings


def test_modules(paths: list[Path]) -> list[Path]:
    """Every test module under ``paths`` (files are taken as given), skipping ``SKIP_DIRS``."""
    found = []
    for path in paths:
        if path.is_file():
            found.append(path)
            continue
        for file in sorted(path.rglob("*.py")):
            relative = file.relative_to(path)
            if not SKIP_DIRS.intersection(relative.parts) and is_test_module(relative):
                found.append(file)
    return found


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or [ROOT]
    findings = []
    for module in test_modules(paths):
        findings += check_source(module.read_text(encoding="utf-8"), module.relative_to(ROOT) if module.is_relative_to(ROOT) else module)
    for finding in findings:
        print(finding)
    if findings:
        print(f"\n{len(findings)} clock verdict(s) in tests: see scripts/check_test_clocks.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
