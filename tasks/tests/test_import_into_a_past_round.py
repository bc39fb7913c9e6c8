"""Importing a dataset can name its round: a missing round is created closed (ANLI R2 lands in round 2)."""

from django.core.management import call_command

from tasks.models import Dataset, Round
from tests.shared_data import shared_file


def test_anli_round_two_lands_in_a_new_closed_round_two(nli_task):
    path = shared_file("anli/ANLI_analysis_r2_dev.csv")

    call_command("import_dataset", "nli", "anli-r2-dev", str(path), "--map", "premise=context", "--map", "hypothesis=statement",
                 "--map", "label=gold_label", "--uid", "uid", "--round", "2", "--split", "dev")

    dataset = Dataset.objects.get(task=nli_task, name="anli-r2-dev")
    assert (dataset.round.number, dataset.round.status) == (2, Round.Status.CLOSED)
    assert (dataset.label_visibility, dataset.item_count, dataset.version, len(dataset.checksum)) == ("hidden", 1000, 1, 64)
    assert dataset.source == str(path.resolve()) and len(dataset.source_checksum) == 64
