#!/usr/bin/env python3
"""Refuse docs that name a repository path that is not there (``make lint`` runs this).

The docs name files to read (``validation/transfer.py``), rules inside them
(``validation/transfer.py:ready_models``), folders (``tasks/kinds/``) and commands that run them
(``.venv/bin/python benchmarks/arena_coverage.py``). A file that moves leaves such a name behind,
and MkDocs checks only links. This reads every Markdown page under ``docs/`` and ``README.md`` and
checks each repository path in their code (inline code spans and fenced blocks):

1. a word is a repository path when its first segment is a folder the repository tracks
   (``git ls-files``, new files git does not ignore included: ``tasks/...``, ``scripts/...``; not
   ``.venv/`` or ``var/``, which a checkout makes) and it holds a ``/``; a URL path
   (``/tasks/<code>/``) is not one;
2. ``path:name`` (a function, class or setting in the file) and ``path::test`` (a pytest id) name
   something in the file: the name must occur in it as a word; ``path:123`` is a line number, left
   alone;
3. a path with a placeholder or a pattern (``<task>``, ``*``, ``{a,b}``) is checked up to the folder
   before it;
4. the path must be such a file, or a folder holding one.

Each missing path is reported as ``docs/page.md:line: `path` ...``. Usage:
``scripts/check_doc_paths.py [PAGE ...]`` (default: every page). Exits 1 when any is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE = re.compile(r"(`+)(.+?)\1")
# Characters around a path in a command or a sentence, never part of it.
EDGES = "\"'()[]{},;.:!?`<>"
PLACEHOLDER = re.compile(r"[<*{|$]")


def tracked() -> tuple[set[str], set[str]]:
    """``(files, folders)`` the repository tracks or will (new files git does not ignore), relative to its
    root (folders without a trailing ``/``)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    files = set(out.split("\n")) - {""}
    folders = {str(Path(f).parents[i]) for f in files for i in range(len(Path(f).parents) - 1)}
    return files, folders


def code_lines(text: str):
    """``(line number, code text)`` of every inline code span and every line of a fenced block."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            yield number, line
        else:
            for match in INLINE.finditer(line):
                yield number, match.group(2)


def candidates(code: str, top: set[str]):
    """The words of ``code`` that name a repository path: ``(path, name or None)``."""
    for word in re.split(r"[\s=]+", code):
        word = word.strip(EDGES).removesuffix("'s").strip(EDGES)  # "tasks/signals.py's signals"
        if "/" not in word or word.startswith(("/", "http:", "https:", "./")) and not word.startswith("./scripts"):
            continue
        word = word.removeprefix("./")
        path, name = word, None
        if "::" in path:
            path, name = path.split("::", 1)
            name = name.split("[", 1)[0]
        elif ":" in path:
            path, name = path.split(":", 1)
            name = None if not name or name.isdigit() or not name.isidentifier() else name
        if path.split("/", 1)[0] not in top:
            continue
        yield path.rstrip("/."), name


def problem(path: str, name: str | None, files: set[str], folders: set[str]) -> str | None:
    """Why ``path`` (and ``name`` in it) does not resolve, or None when it does."""
    if PLACEHOLDER.search(path):  # check the folder before the first placeholder
        folder = path[:PLACEHOLDER.search(path).start()].rsplit("/", 1)[0]
        return None if folder in folders else f"its folder {folder}/ is not in the repository"
    if path in folders:
        return None
    if path not in files:
        return "is not in the repository"
    if name and not re.search(rf"\b{re.escape(name)}\b", (ROOT / path).read_text(encoding="utf-8", errors="replace")):
        return f"has no {name}"
    return None


def check(pages: list[Path]) -> list[str]:
    """The findings on ``pages``, one line each."""
    files, folders = tracked()
    top = {f.split("/", 1)[0] for f in files if "/" in f}
    found = []
    for page in pages:
        for number, code in code_lines(page.read_text(encoding="utf-8")):
            for path, name in candidates(code, top):
                why = problem(path, name, files, folders)
                if why:
                    shown = f"{path}:{name}" if name else path
                    where = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
                    found.append(f"{where}:{number}: `{shown}` {why}")
    return found


def main(argv: list[str]) -> int:
    pages = [Path(p).resolve() for p in argv] or [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = check(pages)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} path(s) in the docs do not resolve: fix the docs or the path.", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
