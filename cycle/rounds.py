"""A round over HTTP, as its owner, annotators and validators would run it.

Decides what the replay sends: the owner opens a round with a model in the loop and uploads its
contexts (:func:`open_round`, :func:`upload_contexts`); one annotator account per author writes the
examples (:func:`collect_examples`), one validator account per recorded validator sends the votes
in order (:func:`validate_examples`), and the owner closes the round into its datasets
(:func:`close_round`). What the platform refuses is counted, not retried.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Example
from cycle.platform import Platform, account, api
from dynabench_client import BadRequest
from validation.error_codes import ValidationErrorCode
from validation.queue import LEASE_DURATION

HTTP_THREADS = 6


def upload_contexts(p: Platform, round_number: int, contexts: list[dict]) -> dict[str, int]:
    """Upload ``[{"uid", "prompt"}]`` as contexts of the round (owner, multipart JSONL); return ``{uid: context id}``."""
    body = "".join(json.dumps({"uid": c["uid"], "prompt": c["prompt"]}, ensure_ascii=False) + "\n" for c in contexts).encode()
    api(p.owner, "POST", f"/tasks/{p.code}/rounds/{round_number}/contexts",
         files={"file": ("contexts.jsonl", io.BytesIO(body), "application/jsonl")}, data={"uid_field": "uid", "format": "jsonl"})
    return {c["uid"]: c["id"] for c in p.owner._pages(f"/tasks/{p.code}/rounds/{round_number}/contexts")}


def open_round(p: Platform, model_id: int) -> dict:
    """Open the task's next round with ``model_id`` in the loop (owner, ``POST /tasks/{code}/rounds``)."""
    return api(p.owner, "POST", f"/tasks/{p.code}/rounds", json={"target_models": [model_id]})


def collect_examples(p: Platform, round_number: int, rows: list[dict]) -> dict:
    """Submit ``rows`` (``{"author", "context", "text", "label"}``) as examples over HTTP, one thread per author at a time.

    Returns ``{"ids": [example id per row, None where the platform refused it], "seconds",
    "authors", "refused": {reason: count}}``.
    """
    tokens = {author: account(f"{p.code}-r{round_number}-author-{author}", ("annotator",)) for author in sorted({r["author"] for r in rows})}
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


def validate_examples(p: Platform, round_number: int, votes: dict[int, list[tuple[str, str]]]) -> dict:
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
    tokens = {name: account(f"{p.code}-r{round_number}-validator-{name}", ("validator",)) for name in names}
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


def close_round(p: Platform, round_number: int) -> list[dict]:
    """Close the round into its train/dev/test datasets (owner, ``POST .../rounds/{n}/close``)."""
    body = api(p.owner, "POST", f"/tasks/{p.code}/rounds/{round_number}/close", json={})
    return [{"name": d["name"], "items": d["item_count"], "access": d["access"]} for d in body["datasets"]]
