"""The sentiment cycle: rounds 1 and 2 of DynaSent v1.1 (Potts et al., ACL 2021) replayed through the platform.

:func:`cycle.driver.run_cycle` calls :func:`run_sentiment` for ``sentiment``; its steps:

1. Round 1: DynaSent round 1 dev enters round 1 with its five real crowd votes per sentence
   (``validation.imports.import_votes``), DynaSent round 1 test becomes a scoring dataset
   (``tasks.data.importers.datasets.import_dataset``); the retraining job (``validation.retraining.request_retraining``
   → ``validation.jobs.retrain_from_validated`` in the worker) trains model 1 on round 1's
   validated examples (plus the task's seed set). Its scores come from the evaluation job
   of step 5: the job evaluates a model on every dataset of the task at once, so model 1 is
   evaluated once, when every dataset exists, instead of twice.
2. Round 2 opens with model 1 in the loop (``POST /api/v1/tasks/sentiment/rounds``); the
   prompt sentences are uploaded as contexts (``POST .../rounds/2/contexts``); the 720
   sentences of DynaSent round 2 dev are written by one annotator account per
   ``sentence_author`` with their gold label (``POST /api/v1/examples``); the server decides
   for each whether it fooled model 1.
3. Validation: each sentence's five real votes are sent by one validator account per crowd
   worker (``POST /api/v1/validations``): ``correct`` when the vote equals the example's
   label, else ``incorrect``, the voted category in ``metadata["voted_label"]``. The votes of
   a sentence go in a fixed random order (seeded by its id) and consensus settles it at
   ``validations_needed`` (3) equal verdicts; later votes are refused by the platform and counted.
4. Round 2 figures (the API's counts and vMER, ``validation.round_statistics.round_agreement`` on
   the voted categories, examples per label), then ``POST .../rounds/2/close`` builds its datasets.
5. DynaSent round 2 test becomes a scoring dataset; the retraining job trains model 2 on
   round 1 + verified round 2 examples; both models are (re-)evaluated by the evaluation
   job and read back from the API with the leaderboard's Dynascore.
"""

from __future__ import annotations

import hashlib
import json
import random
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
from cycle.worker import evaluate, leaderboard_recomputed, retrain
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.files import FileSpec
from tasks.models import Round
from tasks.services import set_round_status
from validation.calculations import agreement_from_ratings
from validation.imports import import_votes
from validation.round_statistics import round_agreement

#: Published Fleiss' κ of DynaSent (data README: the official notebook outputs of cgpotts/dynasent).
PUBLISHED_KAPPA = {1: "0.616 (round 1 dev)", 2: "0.681 (round 2 dev)"}
DYNASENT = {
    "r1_dev": "dynasent/dynasent-v1.1-round01-yelp-dev.jsonl",
    "r1_test": "dynasent/dynasent-v1.1-round01-yelp-test.jsonl",
    "r2_dev": "dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl",
    "r2_test": "dynasent/dynasent-v1.1-round02-dynabench-test.jsonl",
}


def _stage_jsonl(source: Path, target: Path, limit: int | None) -> Path:
    """Return ``source``, or its first ``limit`` lines copied to ``target`` when ``limit`` is set."""
    if not limit:
        return source
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(source, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as out:
        for n, line in enumerate(src):
            if n >= limit:
                break
            out.write(line)
    return target


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_sentiment(p: Platform, owner_user, steps: Steps, data: Path, staged: Path) -> dict:
    task, limit = p.task, p.options.limit
    files = {key: _stage_jsonl(data / rel, staged / Path(rel).name, limit) for key, rel in DYNASENT.items()}
    round1 = Round.objects.get(task=task, number=1)
    figures = {"rounds": []}

    def spec(path):
        return FileSpec(path=path, mapping={"text": "sentence", "label": "gold_label"}, uid_field="text_id")

    def round_one():
        votes = import_votes(round=round1, path=files["r1_dev"], fmt="dynasent")
        imported = import_dataset(task=task, name="dynasent-r1-test", spec=spec(files["r1_test"]), round_number=1, access="scoring", split="test", progress=False)
        model1 = retrain(p, "minilm-r1", owner_user)
        agreement = round_agreement(round1, field="voted_label")
        rnd = round_figures(p, round1, how="DynaSent round 1 dev with its real votes (import_votes)", model_in_loop="DynaSent Model 0 (outputs from the file)")
        rnd["validations"] = {"recorded": votes.validations_created, "validators": len({w for r in _read_jsonl(files["r1_dev"]) for ws in r["label_distribution"].values() for w in ws})}
        rnd["agreement"] = {
            "platform_kappa": agreement.fleiss_kappa, "platform_items": agreement.fleiss_items, "platform_raters": agreement.raters_per_item,
            "file_kappa": agreement.fleiss_kappa, "published": PUBLISHED_KAPPA[1],
        }
        rnd["import"] = {"votes": votes.summary(), "r1_test": imported.summary()}
        figures["rounds"].append(rnd)
        return model1

    model1 = steps.run("1. round 1: import votes and test set, train model 1 (retraining job)", round_one)

    r2_rows = _read_jsonl(files["r2_dev"])

    def collect():
        set_round_status(round=round1, status=Round.Status.CLOSED, acting_user=owner_user)  # the admin's round-status action
        open_round(p, model1.pk)
        prompts = {}
        for row in r2_rows:
            prompt = row["prompt_data"]["prompt_sentence"] if row.get("has_prompt") else row["sentence"]
            prompts.setdefault(hashlib.sha256(prompt.encode()).hexdigest()[:20], prompt)
        context_ids = upload_contexts(p, 2, [{"uid": uid, "prompt": prompt} for uid, prompt in prompts.items()])
        rows = [
            {"author": row["sentence_author"], "label": row["gold_label"], "text": row["sentence"],
             "context": context_ids[hashlib.sha256((row["prompt_data"]["prompt_sentence"] if row.get("has_prompt") else row["sentence"]).encode()).hexdigest()[:20]]}
            for row in r2_rows
        ]
        return collect_examples(p, 2, rows)

    collected = steps.run("2. round 2: collect examples over the API against model 1", collect)
    round2 = Round.objects.get(task=task, number=2)

    def validate():
        votes = {}
        for example_id, row in zip(collected["ids"], r2_rows):
            if example_id is None:
                continue
            ballot = [(worker, label) for label, workers in row["label_distribution"].items() for worker in workers]
            random.Random(f"{p.options.seed}:{row['text_id']}").shuffle(ballot)
            votes[example_id] = ballot
        return validate_examples(p, 2, votes)

    validations = steps.run("3. round 2: validate with the real crowd votes over the API", validate)

    def figures_and_close():
        rnd = round_figures(p, round2, how="DynaSent round 2 dev written over the API", model_in_loop=model1.name)
        agreement = round_agreement(round2, field="voted_label")
        ratings = [[label for label, workers in row["label_distribution"].items() for _ in workers] for row in r2_rows]
        full = agreement_from_ratings(ratings)
        rnd.update(
            authors=collected["authors"], collection_seconds=collected["seconds"], refused=collected["refused"],
            examples_per_second=round(len(r2_rows) / collected["seconds"], 2) if collected["seconds"] else None,
            validations=validations,
            agreement={
                "platform_kappa": agreement.fleiss_kappa, "platform_items": agreement.fleiss_items,
                "platform_raters": agreement.raters_per_item, "platform_alpha": agreement.krippendorff_alpha,
                "file_kappa": full.fleiss_kappa, "published": PUBLISHED_KAPPA[2],
                "note": "consensus settles an example at 3 equal verdicts and the platform refuses later votes, so the platform's κ "
                        "uses each sentence's first votes in a seeded random order; the file's κ uses all five (same function)",
            },
        )
        rnd["datasets"] = close_round(p, 2)
        figures["rounds"].append(rnd)

    steps.run("4. round 2: figures (vMER, κ, per label), close into datasets", figures_and_close)

    def retrain_and_evaluate():
        imported = import_dataset(task=task, name="dynasent-r2-test", spec=spec(files["r2_test"]), round_number=2, access="scoring", split="test", progress=False)
        model2 = retrain(p, "minilm-r1-r2", owner_user)
        results = evaluate(p.owner, [model1.pk, model2.pk], p.processes, admin=p.admin)
        leaderboard_recomputed(task, p.processes)
        return model2, results, imported

    model2, results, imported = steps.run("5. retrain on rounds 1+2 (retraining job), evaluate both, leaderboard", retrain_and_evaluate)
    figures["notes"] = [
        f"dynasent-r2-test: {imported.summary()}",
        "The retraining job trains on every verified example of every round, whatever split close_round gave it, so "
        "model 2 has seen the items of sentiment-r2-dev/test: its scores there are not held out. DynaSent's own round 1 "
        "and round 2 test sets are.",
    ]
    return finish(p, figures, [(model1, "seed set + round 1 (DynaSent R1 dev, validated)"), (model2, "seed set + round 1 + verified round 2")], results)
