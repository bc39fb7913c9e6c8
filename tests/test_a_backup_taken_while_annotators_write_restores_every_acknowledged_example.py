"""The restore drill of docs/operate/backups.md: a backup taken while annotators write examples and
validators record verdicts through the API restores into a new database that holds every example
and verdict acknowledged before the backup began, whose counts all agree (``manage.py
reconcile_counters`` finds no drift): ``pg_dump`` of a PostgreSQL cluster the test owns, and SQLite's
online backup (the ``.backup`` of the ``sqlite3`` shell, Python's ``Connection.backup``)."""

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dynabench import embedded_redis
from tests.annotator_load import UNLIMITED, Load, writing_setup
from tests.worker_stack import MANAGE, ROOT, WorkerStack

pytestmark = pytest.mark.slow

#: Examples acknowledged before the backup starts, and after it ends: writing went on across it.
BEFORE, AFTER = 20, 10


def reconcile(stack: WorkerStack, database_url: str) -> str:
    """``manage.py reconcile_counters --dry-run`` (report, change nothing) against ``database_url`` in the stack's environment; its summary."""
    try:
        done = subprocess.run([sys.executable, MANAGE, "reconcile_counters", "--dry-run", "--skip-checks"], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, env={**stack.env, "DATABASE_URL": database_url})
    finally:  # the command's set-up started the stack's embedded Redis again, after the stack stopped
        embedded_redis.stop(Path(stack.env["DYNABENCH_VAR_DIR"]) / "redis.sock")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def write_across_a_backup(stack: WorkerStack, model_dir, take_backup) -> tuple[dict, dict]:
    """Annotators and a validator write through the stack's API while ``take_backup()`` runs;
    returns the examples and the verdicts acknowledged before it began (``{id: text}``, ``{id: ""}``)."""
    setup = stack.json(writing_setup(model_dir, annotators=3, validators=1))
    load = Load(stack.asgi(threads=2), setup).start()
    try:
        load.wait_for_acknowledged(BEFORE)
        load.wait_for_acknowledged(1, kind="validation")
        began = time.monotonic()
        take_backup()
        load.wait_for_acknowledged(len(load.acknowledged()) + AFTER)
    finally:
        load.stop()
    return load.acknowledged_by(began), load.acknowledged_by(began, "validation")


def assert_restored(rows: dict, verdicts: set, examples: dict, validations: dict, summary: str) -> None:
    missing = {pk: text for pk, text in examples.items() if rows.get(pk) != text}
    assert missing == {}, f"{len(missing)} acknowledged examples missing from the restored copy"
    assert set(validations) <= verdicts
    assert summary.count("0 drifted") == 3 and "checked" in summary, summary


def test_a_pg_dump_taken_while_annotators_write_restores_every_acknowledged_example(
    tmp_path_factory, stack_template, tiny_classifier_dir, private_postgres,
):
    root = tmp_path_factory.mktemp("pg-dump-drill")
    stack = WorkerStack(root, stack_template, DATABASE_URL=private_postgres.create_database("live"), **UNLIMITED)
    try:
        stack.python("from django.core.management import call_command\ncall_command('migrate', verbosity=0)")
        dump = root / "live.dump"
        examples, validations = write_across_a_backup(stack, tiny_classifier_dir, lambda: private_postgres.dump("live", dump))
    finally:
        stack.stop()

    restored = private_postgres.restore(dump, "restored")
    summary = reconcile(stack, restored)
    with private_postgres.connect("restored") as conn:
        rows = dict(conn.execute("SELECT id, input->>'text' FROM annotation_example").fetchall())
        verdicts = {pk for (pk,) in conn.execute("SELECT id FROM validation_validation")}
    assert_restored(rows, verdicts, examples, validations, summary)


def test_a_sqlite_online_backup_taken_while_annotators_write_restores_every_acknowledged_example(
    tmp_path_factory, stack_template, tiny_classifier_dir,
):
    root = tmp_path_factory.mktemp("sqlite-backup-drill")
    stack = WorkerStack(root, stack_template, **UNLIMITED)
    backup = root / "backup.sqlite3"

    def online_backup():
        source, target = sqlite3.connect(stack.db, timeout=30), sqlite3.connect(backup)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()

    try:
        examples, validations = write_across_a_backup(stack, tiny_classifier_dir, online_backup)
    finally:
        stack.stop()

    restored = root / "restored.sqlite3"
    restored.write_bytes(backup.read_bytes())  # the restore: the backup file put in place of the database
    summary = reconcile(stack, f"sqlite:///{restored}")
    with sqlite3.connect(restored) as conn:
        rows = dict(conn.execute("SELECT id, json_extract(input, '$.text') FROM annotation_example").fetchall())
        verdicts = {pk for (pk,) in conn.execute("SELECT id FROM validation_validation")}
    assert_restored(rows, verdicts, examples, validations, summary)
