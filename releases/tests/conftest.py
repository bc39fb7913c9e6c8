"""Fixtures of the release tests: a DynaSent task whose two closed rounds hold the real DynaSent
dev (public labels) and test (hidden labels) sets, imported from the shared data folder."""

import pytest
from django.core.management import call_command

from tasks.models import Task
from tests.shared_data import shared_file

FILES = {1: "dynasent/dynasent-v1.1-round01-yelp-{split}.jsonl", 2: "dynasent/dynasent-v1.1-round02-dynabench-{split}.jsonl"}


@pytest.fixture
def dynasent_task(db, sentiment_task, owner, private_media):
    """A classification task ``dynasent`` (the sentiment task's config) owned by ``owner``, with
    rounds 1 and 2 closed: per round a public ``dev`` dataset (3,600 and 720 items) and a hidden
    ``test`` dataset (3,600 and 720 items), from the real DynaSent v1.1 files."""
    task = Task.objects.create(code="dynasent", name="DynaSent", kind=sentiment_task.kind, config=sentiment_task.config)
    task.owners.add(owner)
    for number, pattern in FILES.items():
        for split, labels in (("dev", "public"), ("test", "hidden")):
            call_command("import_dataset", "dynasent", f"dynasent-r{number}-{split}", str(shared_file(pattern.format(split=split))),
                         "--round", str(number), "--split", split, "--labels", labels, "--access", "standard",
                         "--map", "text=sentence", "--map", "label=gold_label", "--uid", "text_id")
    return task
