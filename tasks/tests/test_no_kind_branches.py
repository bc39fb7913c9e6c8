"""No code branches on the task kind outside the tasks/kinds/ package: everything else asks ``task.spec``."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS_PACKAGE = ROOT / "tasks" / "kinds"
SKIPPED_DIRS = {".venv", ".git", "migrations", "tests", "node_modules", "var", "__pycache__"}
# The same pattern as the guard grep: `kind ==`, `kind !=`, `.kind in `, `kind in (`.
PY_BRANCH = re.compile(r"kind ?(==|!=) ?|\.kind in |kind in \(")
TEMPLATE_BRANCH = re.compile(r"\{%[^%]*\btask\.kind\b[^%]*%\}")


def _files(suffix: str):
    for path in sorted(ROOT.rglob(f"*{suffix}")):
        parts = set(path.relative_to(ROOT).parts[:-1])
        if parts & SKIPPED_DIRS or path.is_relative_to(KINDS_PACKAGE):
            continue
        yield path


def _branches(pattern, suffix: str) -> list[str]:
    found = []
    for path in _files(suffix):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_the_pattern_catches_the_branches_it_is_meant_to():
    for line in ('if task.kind == "classification":', "if kind != TaskKind.EXTRACTIVE_QA:",
                 "if task.kind in KINDS:", "if kind in (a, b):"):
        assert PY_BRANCH.search(line), line
    assert TEMPLATE_BRANCH.search('{% if task.kind == "classification" %}')
    assert not PY_BRANCH.search("if task.spec.has_labels:")


def test_no_python_module_outside_the_kinds_package_branches_on_a_kind():
    assert len(list(_files(".py"))) > 50  # the scan really walks the repository
    assert _branches(PY_BRANCH, ".py") == []


def test_no_template_branches_on_the_task_kind():
    assert len(list(_files(".html"))) > 10
    assert _branches(TEMPLATE_BRANCH, ".html") == []
