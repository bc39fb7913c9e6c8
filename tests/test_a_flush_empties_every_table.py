"""Between transactional tests (``live_server``, ``transactional_db``) Django's ``flush`` empties the
database. On PostgreSQL the suite's backend (``tests/postgresql/base.py``) does it with ``DELETE FROM``
each table instead of one ``TRUNCATE``: every table must still end empty, rows that reference each
other included (the foreign keys are checked at the flush's commit)."""

from django.apps import apps
from django.core.management import call_command
from django.db import connection

from annotation.models import Example


def test_a_flush_empties_every_table_rows_that_reference_each_other_included(transactional_db, default_tasks, annotator):
    task = default_tasks["sentiment"]
    round1 = task.current_round()
    Example.objects.create(round=round1, context=round1.contexts.first(), author=annotator, input={"text": "Fine."},
                           target={"label": "neutral"}, model_output={}, model_wrong=False)
    models = [model for model in apps.get_models() if model._meta.managed and not model._meta.proxy]
    assert sum(model.objects.exists() for model in models) >= 6  # tasks, rounds, contexts, datasets, users, examples...

    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)

    left = {model._meta.db_table: model.objects.count() for model in models if model.objects.exists()}
    assert left == {}, f"rows left after the flush on {connection.vendor}: {left}"
