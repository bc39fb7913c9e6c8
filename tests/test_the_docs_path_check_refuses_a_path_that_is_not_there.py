"""``scripts/check_doc_paths.py`` (run by ``make lint``) reports a repository path a docs page names in
its code that is not in the repository (a moved file, a name no longer in its file, a folder before a
placeholder), leaves URLs, checkout-made folders and line numbers alone, and passes on the docs."""

import importlib.util
import subprocess
import sys

from django.conf import settings

SCRIPT = settings.BASE_DIR / "scripts" / "check_doc_paths.py"
_spec = importlib.util.spec_from_file_location("check_doc_paths", SCRIPT)
check_doc_paths = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_doc_paths)


def findings(tmp_path, markdown: str) -> list[str]:
    page = tmp_path / "page.md"
    page.write_text(markdown, encoding="utf-8")
    return check_doc_paths.check([page])


def test_a_moved_file_a_missing_name_and_a_missing_folder_are_reported(tmp_path):
    found = findings(tmp_path, "Example: `tasks/task_definitions/colours-vqa.json`.\n"
                               "The rule: `validation/transfer.py:no_such_function`.\n"
                               "Seeds: `tasks/seed_data/*.jsonl`.\n")

    assert [line.split(": ", 1)[1] for line in found] == [
        "`tasks/task_definitions/colours-vqa.json` is not in the repository",
        "`validation/transfer.py:no_such_function` has no no_such_function",
        "`tasks/seed_data/*.jsonl` its folder tasks/seed_data/ is not in the repository",
    ]
    assert found[0].endswith("is not in the repository") and ":1: " in found[0]


def test_paths_that_resolve_and_words_that_are_no_paths_pass(tmp_path):
    assert findings(tmp_path, "\n".join([
        "`tasks/data/task_definitions/colours-vqa.json`, `validation/transfer.py:ready_models`, `tasks/kinds/`,",
        "`tasks/data/task_definitions/<code>.json`, `leaderboard/jobs.py:123`, `/tasks/<code>/console/`,",
        "`https://example.org/tasks/x.py`, `.venv/bin/pytest`, `var/db.sqlite3`, `tasks/signals.py`'s signals",
        "```sh",
        ".venv/bin/python benchmarks/arena_coverage.py --boards 20",
        "```",
    ])) == []


def test_the_docs_pass():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)

    assert done.returncode == 0, done.stdout + done.stderr
