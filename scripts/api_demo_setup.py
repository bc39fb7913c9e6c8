"""Prepare a server for the API client demo (``scripts/api_demo.sh``); prints ``KEY=value`` lines.

1. Migrates and seeds the four default tasks.
2. Imports DynaSent round 1 (``../shared/data/dynasent``) into the sentiment task's round 1:
   the dev set as a ``scoring`` dataset, the test set as a ``hidden`` one.
3. Puts a model in the loop of round 1 when it has none: the default MiniLM sentiment model
   when ``manage.py ensure_default_models`` exists (``--tiny`` skips it), else a tiny model.
4. Creates the user ``api-demo`` (annotator + researcher) and its API token.
5. Builds a tiny sentiment model directory for the demo to submit.

Idempotent: re-running reuses what exists. Run with the platform's settings (``DYNABENCH_VAR_DIR`` etc.).
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command, get_commands  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from tasks.data.importers.datasets import import_dataset  # noqa: E402
from tasks.data.importers.files import FileSpec  # noqa: E402
from tasks.models import Dataset, MLModel, Task  # noqa: E402
from tasks.data.seed import seed_default_tasks  # noqa: E402
from tests.shared_data import SHARED_DATA  # noqa: E402  (DYNABENCH_SHARED_DATA, ../shared/data or /work/shared/data)

DYNASENT = (SHARED_DATA or Path("../shared/data")) / "dynasent"


def _import(task, name, filename, split):
    if Dataset.objects.filter(task=task, name=name).exists():
        return f"{name}: present"
    spec = FileSpec(path=DYNASENT / filename, mapping={"text": "sentence", "label": "gold_label"}, uid_field="text_id")
    return import_dataset(task=task, name=name, spec=spec, round_number=1, access="scoring", split=split, progress=False).summary()


def _model_in_loop(task, *, tiny: bool) -> str:
    round1 = task.rounds.get(number=1)
    if round1.target_models.exists():
        return f"model in the loop: {round1.target_models.first().name}"
    if not tiny and "ensure_default_models" in get_commands():
        call_command("ensure_default_models", "--inline")
        round1.refresh_from_db()
        if round1.target_models.exists():
            return f"model in the loop: {round1.target_models.first().name} (default)"
    from tests.tiny_models import build_tiny_classifier

    path = build_tiny_classifier(settings.VAR_DIR / "demo-models" / "tiny-sentiment-in-loop", task.labels)
    model = MLModel.objects.create(task=task, name="tiny-sentiment-in-loop", path=str(path), kind=MLModel.Kind.HF_DIRECTORY)
    round1.target_models.add(model)
    return f"model in the loop: {model.name} (tiny)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="Use a tiny model in the loop instead of the default MiniLM one.")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    seed_default_tasks()
    task = Task.objects.get(code="sentiment")
    notes = [
        _import(task, "dynasent-r1-dev", "dynasent-v1.1-round01-yelp-dev.jsonl", "dev"),
        _import(task, "dynasent-r1-test", "dynasent-v1.1-round01-yelp-test.jsonl", "test"),
        _model_in_loop(task, tiny=args.tiny),
    ]
    user, _ = User.objects.get_or_create(username="api-demo")
    user.groups.add(*Group.objects.filter(name__in=["annotator", "researcher"]))
    token, _ = Token.objects.get_or_create(user=user)
    from tests.tiny_models import build_tiny_classifier

    submission = settings.VAR_DIR / "demo-models" / "tiny-sentiment-submission"
    if not (submission / "config.json").exists():
        build_tiny_classifier(submission, task.labels)
    for note in notes:
        print(f"# {note}", file=sys.stderr)
    print(f"DYNABENCH_API_KEY={token.key}")
    print(f"DEMO_MODEL_DIR={submission}")


if __name__ == "__main__":
    main()
