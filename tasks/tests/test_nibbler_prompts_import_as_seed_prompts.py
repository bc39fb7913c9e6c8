"""The released Adversarial Nibbler prompts (shared/data/adversarial-nibbler: attempted CSVs and the
column-oriented JSON of submitted prompts) import as seed prompts of the text-to-image task: one
context per distinct non-blank prompt, tagged with its round and file kind, and importing again adds
nothing."""

import csv
import json

from django.core.management import call_command

from tasks.models import Context
from tests.shared_data import shared_file
from tests.t2i_support import nibbler_task


def test_attempted_and_submitted_prompts_become_tagged_seed_prompts(owner):
    task = nibbler_task(owner)
    attempted = shared_file("adversarial-nibbler/round1/attempted/dev.csv")
    submitted = shared_file("adversarial-nibbler/round3/submitted/round3_submitted_all.json")
    call_command("import_nibbler_prompts", task.code, "1", str(attempted), str(submitted))

    with attempted.open(encoding="utf-8", newline="") as fh:
        from_csv = {row["prompt"].strip() for row in csv.DictReader(fh)} - {""}
    from_json = {str(p).strip() for p in json.loads(submitted.read_text(encoding="utf-8"))["prompt"].values()} - {""}
    contexts = Context.objects.filter(round__task=task)
    assert contexts.count() == len(from_csv | from_json)
    assert {c.data["prompt"] for c in contexts} == from_csv | from_json
    assert set(contexts.values_list("tag", flat=True)) == {"round1-attempted", "round3-submitted"}
    assert contexts.filter(tag="round3-submitted").count() == len(from_json - from_csv)

    call_command("import_nibbler_prompts", task.code, "1", str(attempted))
    assert Context.objects.filter(round__task=task).count() == len(from_csv | from_json)
