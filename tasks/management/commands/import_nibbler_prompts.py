"""``manage.py import_nibbler_prompts TASK ROUND FILE [FILE ...]``: the released Adversarial Nibbler
prompts as seed prompts (contexts) of a text-to-image task's round.

Reads the files of ``shared/data/adversarial-nibbler`` as its README describes them: the CSVs
(``round*/attempted|submitted/*.csv``: an unnamed index column and ``prompt``) and the pandas
column-oriented JSON of the submitted prompts (``{column: {row index: value}}`` with ``prompt``,
``hashed_filename``, ``submission_annotations``, ``validation``; only ``prompt`` is kept: the images
were never released). Each prompt becomes a context ``{"prompt": text}`` tagged with where it came from
(``round1-attempted``, ``round3-submitted``, ...); blank prompts are skipped and the same prompt twice is
one context (uid: a hash of the text). The rows go through the platform's importer
(``tasks.data.importers.contexts.import_contexts``): all-or-nothing, re-importing adds nothing.
"""

import csv
import json
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dynabench.errors import RuleError
from tasks.data.importers.contexts import import_contexts
from tasks.data.importers.files import FileSpec
from tasks.management.commands._import_options import get_task


def nibbler_prompts(path: Path) -> list[str]:
    """The prompts of one released Nibbler file (CSV or column-oriented JSON), in file order."""
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            return [row.get("prompt") or "" for row in csv.DictReader(fh)]
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        column = data.get("prompt") if isinstance(data, dict) else None
        if not isinstance(column, dict):
            raise CommandError(f"{path}: not a column-oriented Nibbler file (no 'prompt' column)")
        return [str(column[k] or "") for k in sorted(column, key=lambda k: int(k) if str(k).isdigit() else str(k))]
    raise CommandError(f"{path}: a Nibbler file is .csv or .json")


def source_tag(path: Path) -> str:
    """``round1-attempted`` for ``.../round1/attempted/dev.csv``; the file's stem when the layout differs."""
    parts = [p for p in path.parts[-3:-1] if p]
    return "-".join(parts)[:64] if parts and parts[0].startswith("round") else path.stem[:64]


class Command(BaseCommand):
    help = ("Import released Adversarial Nibbler prompts (CSV or column-oriented JSON) as seed prompts of a text-to-image "
            "task's round. Example: import_nibbler_prompts adversarial-nibbler 1 ../shared/data/adversarial-nibbler/round1/attempted/dev.csv")

    def add_arguments(self, parser):
        parser.add_argument("task", help="Task code, e.g. adversarial-nibbler.")
        parser.add_argument("round", type=int, help="Round number.")
        parser.add_argument("files", nargs="+", type=Path, help="Nibbler .csv or .json files.")

    def handle(self, *args, **options):
        task = get_task(options["task"])
        field = next((f["name"] for f in task.config.get("context_fields", [])), None)
        if field is None:
            raise CommandError(f"task {task.code} has no context field to hold a seed prompt")
        with tempfile.TemporaryDirectory(prefix="nibbler-") as folder:
            rows = folder + "/prompts.jsonl"
            with open(rows, "w", encoding="utf-8") as out:
                for path in options["files"]:
                    tag = source_tag(path)
                    for prompt in nibbler_prompts(path):
                        if prompt.strip():
                            out.write(json.dumps({"prompt": prompt.strip(), "source": tag}, ensure_ascii=False) + "\n")
            spec = FileSpec(path=Path(rows), format="jsonl", mapping={field: "prompt"}, uid_from="content", tag_field="source")
            try:
                result = import_contexts(task=task, round_number=options["round"], spec=spec, progress=False)
            except RuleError as exc:
                raise CommandError(exc.message) from None
        return result.summary()
