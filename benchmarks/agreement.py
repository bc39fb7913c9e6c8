"""Fleiss' κ on real crowd votes, through the platform, against the published figures.

    /work/main/.venv/bin/python benchmarks/agreement.py

Imports DynaSent round 1 and round 2 dev (5 workers per sentence, ``label_distribution``)
with ``manage.py import_votes`` into a throw-away SQLite database, then computes
``validation.round_statistics.round_agreement`` over the workers' category votes
(positive/negative/neutral/mixed). Side by side: the same κ computed straight from the
file, and the published figures (DynaSent notebooks, quoted in the data README:
Fleiss κ 0.616 for round 1 dev, 0.681 for round 2 dev). Also reports κ on the verdicts
(correct/incorrect against the gold label) and on ANLI round 1 dev's verifier labels.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("DYNABENCH_DATA", ROOT.parent.parent / "shared" / "data"))
if not DATA.exists():
    DATA = Path("/work/shared/data")

tmp = tempfile.mkdtemp(prefix="agreement-bench-")
os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/db.sqlite3"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from tasks.models import Round  # noqa: E402
from tasks.data.seed import seed_task  # noqa: E402
from validation.calculations import agreement_from_ratings  # noqa: E402
from validation.round_statistics import round_agreement  # noqa: E402

PUBLISHED = {1: 0.616, 2: 0.681}
FILES = {1: DATA / "dynasent" / "dynasent-v1.1-round01-yelp-dev.jsonl", 2: DATA / "dynasent" / "dynasent-v1.1-round02-dynabench-dev.jsonl"}


def from_file(path):
    ratings = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            dist = json.loads(line)["label_distribution"]
            ratings.append([label for label, workers in dist.items() for _ in workers])
    return agreement_from_ratings(ratings, categories=("positive", "negative", "neutral", "mixed"))


def main():
    call_command("migrate", verbosity=0)
    task, _ = seed_task("sentiment")
    print(f"{'DynaSent dev':<14}{'items':>7}{'votes':>8}{'κ platform':>12}{'κ file':>9}{'published':>11}{'Δ':>8}{'α':>8}{'κ verdicts':>12}{'import s':>10}")
    for number, path in FILES.items():
        round, _ = Round.objects.get_or_create(task=task, number=number)
        t0 = time.perf_counter()
        call_command("import_votes", "sentiment", str(number), str(path), "--format", "dynasent")
        took = time.perf_counter() - t0
        platform = round_agreement(round, field="voted_label")
        direct = from_file(path)
        verdicts = round_agreement(round)
        print(f"{'round ' + str(number):<14}{platform.n_items:>7}{platform.n_ratings:>8}{platform.fleiss_kappa:>12.4f}"
              f"{direct.fleiss_kappa:>9.4f}{PUBLISHED[number]:>11.3f}{platform.fleiss_kappa - PUBLISHED[number]:>+8.4f}"
              f"{platform.krippendorff_alpha:>8.4f}{verdicts.fleiss_kappa:>12.4f}{took:>10.1f}")
    seed_task("nli")
    call_command("import_votes", "nli", "1", str(DATA / "anli" / "verifier_labels_R1-3.jsonl"), "--format", "anli",
                 "--examples", str(DATA / "anli" / "ANLI_analysis_r1_dev.csv"))
    anli = round_agreement(Round.objects.get(task__code="nli", number=1), field="voted_label")
    print(f"ANLI round 1 dev verifier labels: {anli.n_items} items, {anli.n_ratings} votes, Fleiss κ {anli.fleiss_kappa:.4f} "
          f"over {anli.fleiss_items} items with {anli.raters_per_item} votes, Krippendorff α {anli.krippendorff_alpha:.4f} (no published figure)")


if __name__ == "__main__":
    main()
