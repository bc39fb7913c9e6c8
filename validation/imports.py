"""Importing existing validation votes (DynaSent, ANLI) so agreement runs on real data.

- DynaSent (Potts et al., ACL 2021): each JSONL row has ``text_id``, ``sentence``,
  ``label_distribution`` (``{positive|negative|neutral|mixed: [worker ids]}``, 5 workers),
  ``gold_label`` and the in-loop model's ``model_0_label``/``model_1_label`` with probs;
  round 2 rows add ``sentence_author`` and ``prompt_data.prompt_sentence``. Each row
  becomes a context (uid = ``text_id``) and an example in the round unless one with that
  context uid is there; each worker becomes an inactive user ``dynasent-<worker id>``;
  each vote a validation ``correct`` if the voted label equals the example's target, else
  ``incorrect``, with ``metadata = {"voted_label", "source"}``.
- ANLI (Nie et al., ACL 2020): ``verifier_labels_R1-3.jsonl`` rows ``{"uid", "verifier labels":
  ["e", "n", ...]}`` carry no text, so examples come from an ``ANLI_analysis_r*_dev.csv``
  (``--examples``; ``context``, ``statement``, ``reason``, ``adversary_pred``, ``gold_label``,
  ``uid``). Verifiers are anonymous: the i-th label of a row is user ``anli-verifier-<i>``.

Imported validators have no role and are inactive; the votes bypass ``record_validation``'s
actor checks (they were cast elsewhere) but every example's state is recomputed with the
same ``settle_example``. Re-importing adds nothing twice.
"""

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import counters
from annotation.models import Example
from dynabench.errors import RuleError
from dynabench.jsonbounds import loads_bounded, refused_character
from tasks.kinds import normalise_label
from tasks.models import Context
from validation.calculations import CORRECT, INCORRECT
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation
from validation.consensus import settle_example

FORMATS = ("dynasent", "anli")


@dataclass
class ImportReport:
    rows: int = 0
    examples_created: int = 0
    examples_matched: int = 0
    validations_created: int = 0
    skipped: dict = field(default_factory=dict)

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def summary(self) -> str:
        skipped = "; ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "none"
        return (
            f"read {self.rows} rows: {self.examples_created} examples created, {self.examples_matched} matched, "
            f"{self.validations_created} validations added; skipped: {skipped}"
        )


def _users(usernames) -> dict:
    User = get_user_model()
    existing = {u.username: u for u in User.objects.filter(username__in=usernames)}
    missing = [User(username=n, is_active=False) for n in sorted(set(usernames) - set(existing))]
    for user in missing:
        user.set_unusable_password()
    User.objects.bulk_create(missing, batch_size=1000)
    existing.update({u.username: u for u in User.objects.filter(username__in=[u.username for u in missing])})
    return existing


def _read_jsonl(path: Path, limit: int | None):
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield loads_bounded(line)
            except json.JSONDecodeError as exc:
                raise RuleError(Code.IMPORT_FORMAT, f"{path.name} line {n} is not JSON: {exc.msg}.") from None
            except ValueError as exc:  # dynabench.jsonbounds.JSONRefused: too deep, a huge number, NUL
                raise RuleError(Code.IMPORT_FORMAT, f"{path.name} line {n} is refused: {exc}.") from None
            if limit and n >= limit:
                return


def import_votes(*, round, path, fmt: str, examples_path=None, limit: int | None = None) -> ImportReport:
    """Import the votes in ``path`` (format ``dynasent`` or ``anli``) into ``round``; return a report.

    ``limit``: read at most that many rows (of the examples file for ANLI). Raises
    ``RuleError`` for an unknown format, a missing file, a row without the fields the format
    needs, or a task whose labels do not fit the data; then nothing is written.
    """
    if fmt not in FORMATS:
        raise RuleError(Code.IMPORT_FORMAT, f"Unknown format '{fmt}': use one of {', '.join(FORMATS)}.")
    path = Path(path)
    if not path.is_file():
        raise RuleError(Code.IMPORT_FORMAT, f"No such file: {path}.")
    report = ImportReport()
    with transaction.atomic():
        if fmt == "dynasent":
            _import_dynasent(round, path, limit, report)
        else:
            if not examples_path or not Path(examples_path).is_file():
                raise RuleError(Code.IMPORT_FORMAT, "ANLI verifier labels carry no text: give --examples ANLI_analysis_rN_dev.csv.")
            _import_anli(round, path, Path(examples_path), limit, report)
        counters.recount_rounds([round.pk])  # bulk_create bypassed the per-example counting
    return report


def _existing_examples(round) -> dict:
    return {e.context.uid: e for e in Example.objects.filter(round=round).select_related("context", "round__task")}


def _ensure_examples(round, specs, report) -> dict:
    """``specs``: ``{uid: dict(context_data, input, target, model_output, model_wrong, author, metadata)}``."""
    examples = _existing_examples(round)
    new_uids = [uid for uid in specs if uid not in examples]
    report.examples_matched += len(specs) - len(new_uids)
    contexts = {c.uid: c for c in Context.objects.filter(round=round, uid__in=new_uids)}
    Context.objects.bulk_create(
        [Context(round=round, uid=uid, data=specs[uid]["context_data"], times_used=1) for uid in new_uids if uid not in contexts],
        batch_size=1000,
    )
    contexts = {c.uid: c for c in Context.objects.filter(round=round, uid__in=new_uids)}
    Example.objects.bulk_create(
        [
            Example(round=round, context=contexts[uid], author=specs[uid]["author"], input=specs[uid]["input"],
                    target=specs[uid]["target"], model_output=specs[uid]["model_output"],
                    model_wrong=specs[uid]["model_wrong"], metadata=specs[uid]["metadata"])
            for uid in new_uids
        ],
        batch_size=1000,
    )
    report.examples_created += len(new_uids)
    return _existing_examples(round)


def _add_votes(examples_by_uid, votes, users, task, source, report):
    """``votes``: ``[(uid, username, voted_label)]``; the verdict compares the vote with the target."""
    validations = []
    for uid, username, voted in votes:
        example = examples_by_uid[uid]
        target = example.target.get("label")
        validations.append(Validation(
            example=example, validator=users[username], label=CORRECT if voted == target else INCORRECT,
            metadata={"voted_label": voted, "source": source},
        ))
    before = Validation.objects.count()
    Validation.objects.bulk_create(validations, batch_size=2000, ignore_conflicts=True)
    report.validations_created += Validation.objects.count() - before
    touched = {uid for uid, _, _ in votes}
    for uid in touched:
        settle_example(examples_by_uid[uid])


def _import_dynasent(round, path, limit, report):
    task = round.task
    specs, votes, workers = {}, [], set()
    for row in _read_jsonl(path, limit):
        report.rows += 1
        try:
            uid, sentence, distribution = row["text_id"], row["sentence"], row["label_distribution"]
        except KeyError as exc:
            raise RuleError(Code.IMPORT_FORMAT, f"{path.name}: a row has no {exc.args[0]} (is this a DynaSent file?).") from None
        gold = normalise_label(task.config, row.get("gold_label"))
        if gold is None:
            report.skip(f"rows whose gold label is not a label of {task.code}")
            continue
        model_key = "model_1" if "model_1_label" in row else "model_0"
        model_label = row.get(f"{model_key}_label")
        prompt = (row.get("prompt_data") or {}).get("prompt_sentence") or sentence
        author = f"dynasent-{row['sentence_author']}" if row.get("sentence_author") else "dynasent-yelp"
        workers.add(author)
        specs[uid] = {
            "context_data": {"prompt": prompt},
            "input": {"prompt": prompt, "text": sentence},
            "target": {"label": gold},
            "model_output": {"label": model_label, "probs": row.get(f"{model_key}_probs", {})},
            "model_wrong": model_label != gold,
            "author": author,
            "metadata": {"source": "dynasent", "uid": uid},
        }
        for voted, worker_ids in distribution.items():
            for worker in worker_ids:
                votes.append((uid, f"dynasent-{worker}", voted))
                workers.add(f"dynasent-{worker}")
    users = _users(workers)
    for spec in specs.values():
        spec["author"] = users[spec["author"]]
    examples = _ensure_examples(round, specs, report)
    _add_votes(examples, [v for v in votes if v[0] in specs], users, task, "dynasent", report)


def _import_anli(round, path, examples_path, limit, report):
    task = round.task
    specs = {}
    with open(examples_path, encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh), 1):
            try:
                uid, gold, pred = row["uid"], row["gold_label"], row.get("adversary_pred") or row.get("adverary_pred")
                premise, hypothesis = row["context"], row["statement"]
            except KeyError as exc:
                raise RuleError(Code.IMPORT_FORMAT, f"{examples_path.name}: no column {exc.args[0]} (is this an ANLI_analysis file?).") from None
            bad = next(((name, problem) for name, cell in row.items() if isinstance(cell, str) and (problem := refused_character(cell))), None)
            if bad:  # PostgreSQL refuses NUL in text: say where instead of failing on save
                raise RuleError(Code.IMPORT_FORMAT, f"{examples_path.name} row {n}: column '{bad[0]}' holds {bad[1]}; remove it.")
            target, model_label = normalise_label(task.config, gold), normalise_label(task.config, pred)
            if target is None:
                raise RuleError(Code.IMPORT_FORMAT, f"{examples_path.name} row {n}: gold label '{gold}' is not a label of {task.code}.")
            specs[uid] = {
                "context_data": {"premise": premise},
                "input": {"premise": premise, "hypothesis": hypothesis},
                "target": {"label": target},
                "model_output": {"label": model_label},
                "model_wrong": model_label != target,
                "author": "anli-writer",
                "metadata": {"source": "anli", "uid": uid, "example_explanation": row.get("reason", "")},
            }
            if limit and n >= limit:
                break
    examples = None
    votes, names = [], {"anli-writer"}
    for row in _read_jsonl(path, None):
        report.rows += 1
        uid, labels = row.get("uid"), row.get("verifier labels")
        if uid is None or not isinstance(labels, list):
            raise RuleError(Code.IMPORT_FORMAT, f"{path.name}: a row lacks 'uid' or 'verifier labels' (is this verifier_labels_R1-3.jsonl?).")
        if uid not in specs:
            report.skip("votes for examples not in the examples file")
            continue
        for i, raw in enumerate(labels, 1):
            voted = normalise_label(task.config, raw)
            if voted is None:
                report.skip(f"votes with a label unknown to {task.code}")
                continue
            votes.append((uid, f"anli-verifier-{i}", voted))
            names.add(f"anli-verifier-{i}")
    users = _users(names)
    for spec in specs.values():
        spec["author"] = users[spec["author"]]
    examples = _ensure_examples(round, specs, report)
    _add_votes(examples, votes, users, task, "anli", report)
