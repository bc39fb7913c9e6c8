"""The hate-speech cycle: rounds 1–4 of DynaHate v0.2.2 (Vidgen et al., ACL 2021) replayed through the platform.

:func:`cycle.driver.run_cycle` calls :func:`run_hate_speech` for ``hate-speech``:

``hate-speech`` (DynaHate v0.2.2, Vidgen et al., ACL 2021): rounds 1–4 as given. Round 1's
model in the loop is the task's seed model (``tasks.loop.training.ensure_default_model`` run in
the worker); in each round the dev sentences of that round are written through the API by
one account per DynaHate ``annotator``, validated by ``validations_needed`` validator
accounts from the dataset's label (there are no crowd votes), the round is closed, that
round's test set becomes a scoring dataset, and the retraining job trains the next model
in the loop. Every model is evaluated at the end.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from cycle.figures import finish, round_figures
from cycle.platform import Platform, Steps
from cycle.rounds import (
    close_round,
    collect_examples,
    open_round,
    upload_contexts,
    validate_examples,
)
from cycle.worker import evaluate, leaderboard_recomputed, retrain, wait, wait_trained
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.files import FileSpec
from tasks.models import MLModel, Round
from tasks.services import set_round_status

DYNAHATE = {"dev": "dynahate/dynahate_v0.2.2_dev.csv", "test": "dynahate/dynahate_v0.2.2_test.csv"}


def _dynahate_rows(path: Path, limit: int | None) -> dict[int, list[dict]]:
    """``{round.base: [rows]}`` of a DynaHate CSV, the first ``limit`` rows per round when set."""
    by_round = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            rnd = int(row["round.base"])
            if not limit or len(by_round[rnd]) < limit:
                by_round[rnd].append(row)
    return dict(sorted(by_round.items()))


def _write_csv(rows: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def run_hate_speech(p: Platform, owner_user, steps: Steps, data: Path, staged: Path) -> dict:
    from tasks.loop.training.default_models import ensure_default_model

    task, limit = p.task, p.options.limit
    dev, test = _dynahate_rows(data / DYNAHATE["dev"], limit), _dynahate_rows(data / DYNAHATE["test"], limit)
    # The replay compresses months of writing into minutes: the owner lifts the per-day cap.
    task.config = {**task.config, "daily_example_cap": 0}
    task.save(update_fields=["config"])
    needed = task.validations_needed
    figures = {"rounds": []}
    trained = []

    def seed_model():
        import django_rq

        django_rq.get_queue("training").enqueue(ensure_default_model, task, epochs=p.options.epochs, job_timeout=3600)
        return wait_trained(wait("the seed model", lambda: MLModel.objects.filter(task=task, name="minilm-seed").values_list("pk", flat=True).first(), processes=p.processes), p.processes)

    model = steps.run("0. seed model of round 1 (training job)", seed_model)
    trained.append((model, "seed set"))
    for number, rows in dev.items():
        def one_round(number=number, rows=rows, model=model):
            if number > 1:
                previous = Round.objects.get(task=task, number=number - 1)
                if previous.status == Round.Status.OPEN:
                    set_round_status(round=previous, status=Round.Status.CLOSED, acting_user=owner_user)
                open_round(p, model.pk)
            sets = sorted({r["round"] for r in rows})
            context_ids = upload_contexts(p, number, [{"uid": f"dynahate-{s}", "prompt": f"Write a statement for DynaHate round {s}."} for s in sets])
            examples = [{"author": r["annotator"], "label": r["label"], "text": r["text"], "context": context_ids[f"dynahate-{r['round']}"]} for r in rows]
            collected = collect_examples(p, number, examples)
            validations = validate_examples(p, number, {pk: [(f"v{i}", r["label"]) for i in range(1, needed + 1)] for pk, r in zip(collected["ids"], rows) if pk})
            rnd_obj = Round.objects.get(task=task, number=number)
            rnd = round_figures(p, rnd_obj, how=f"DynaHate round {number} dev written over the API", model_in_loop=model.name)
            rnd.update(authors=collected["authors"], collection_seconds=collected["seconds"], refused=collected["refused"],
                       examples_per_second=round(len(rows) / collected["seconds"], 2) if collected["seconds"] else None,
                       validations=validations)
            rnd["datasets"] = close_round(p, number)
            test_path = _write_csv(test[number], staged / f"dynahate-r{number}-test.csv")
            import_dataset(task=task, name=f"dynahate-r{number}-test", spec=FileSpec(path=test_path, uid_field="acl.id"),
                           round_number=number, access="scoring", split="test", progress=False)
            figures["rounds"].append(rnd)
            return retrain(p, f"minilm-r1-to-r{number}" if number > 1 else "minilm-r1", owner_user)

        model = steps.run(f"{number}. round {number}: collect, validate, close, retrain", one_round)
        trained.append((model, f"seed set + verified rounds 1–{number}" if number > 1 else "seed set + verified round 1"))
    results = steps.run("5. evaluate every model, leaderboard", lambda: evaluate(p.owner, [m.pk for m, _ in trained], p.processes, admin=p.admin))
    leaderboard_recomputed(task, p.processes)
    figures["notes"] = [
        "DynaHate has no crowd votes: each example got validations_needed `correct` validations from the dataset's label.",
        "The retraining job trains on every verified example of every round, whatever split close_round gave it, so the "
        "hate-speech-rN-dev/test scores of later models are not held out; the dynahate-rN-test sets are.",
    ]
    return finish(p, figures, trained, results)
