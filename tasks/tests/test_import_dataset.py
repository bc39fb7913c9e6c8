"""``manage.py import_dataset`` loads the real Dynabench files with the counts their README gives."""

from collections import Counter

from django.core.management import call_command

from tasks.models import Dataset
from tests.shared_data import shared_file

DYNASENT = "dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl"
ANLI = "anli/ANLI_analysis_r1_dev.csv"
DYNAHATE = "dynahate/dynahate_v0.2.2_dev.csv"


def _labels(dataset):
    return Counter(item.target["label"] for item in dataset.items.all())


def test_it_imports_dynasent_round_two_dev_with_240_per_label(sentiment_task):
    path = shared_file(DYNASENT)

    summary = call_command(
        "import_dataset", "sentiment", "dynasent-r2-dev", str(path), "--split", "dev",
        "--map", "text=sentence", "--map", "label=gold_label", "--uid", "text_id",
    )

    dataset = Dataset.objects.get(task=sentiment_task, name="dynasent-r2-dev")
    assert summary == "dataset sentiment/dynasent-r2-dev: 720 added, 0 already present"
    assert dataset.items.count() == 720
    assert _labels(dataset) == {"positive": 240, "negative": 240, "neutral": 240}
    item = dataset.items.get(uid="r2-0018536")
    assert item.input == {"text": "The vegetable risotto would have to be listed as a vegetarian special."}
    assert (dataset.split, dataset.access, dataset.weight) == ("dev", "scoring", 1.0)
    assert dataset.source == str(path.resolve()) and len(dataset.checksum) == 64


def test_it_imports_anli_round_one_with_normalised_labels_and_premise_in_the_input(nli_task):
    path = shared_file(ANLI)

    call_command(
        "import_dataset", "nli", "anli-r1-dev", str(path), "--round", "1", "--access", "standard", "--weight", "0.5",
        "--map", "premise=context", "--map", "hypothesis=statement", "--map", "label=gold_label", "--meta", "adversary_pred",
    )

    dataset = Dataset.objects.get(task=nli_task, name="anli-r1-dev")
    assert dataset.items.count() == 1000
    assert _labels(dataset) == {"entailment": 334, "neutral": 333, "contradiction": 333}
    item = dataset.items.get(uid="bf628cf5-6948-4595-a6d0-daf99beb47b9")
    assert set(item.input) == {"premise", "hypothesis"}
    assert item.input["hypothesis"] == "Form and meaning are the only aspects of language linguistics is concerned with."
    assert item.target == {"label": "contradiction"} and item.metadata == {"adversary_pred": "n"}
    assert (dataset.round.number, dataset.access, dataset.weight) == (1, "standard", 0.5)


def test_it_imports_dynahate_per_round_from_one_file_with_filter(hate_task):
    path = shared_file(DYNAHATE)

    for number in (1, 2, 3, 4):
        call_command(
            "import_dataset", "hate-speech", f"dynahate-r{number}-dev", str(path),
            "--uid", "acl.id", "--tag", "round", "--filter", f"round.base={number}",
        )

    datasets = {d.name: d for d in Dataset.objects.filter(task=hate_task)}
    sizes = [datasets[f"dynahate-r{n}-dev"].items.count() for n in (1, 2, 3, 4)]
    assert sizes == [1116, 999, 995, 1015]
    totals = sum((_labels(d) for d in datasets.values()), Counter())
    assert totals == {"hate": 2187, "nothate": 1938}
    round_two_tags = Counter(datasets["dynahate-r2-dev"].items.values_list("tag", flat=True))
    assert round_two_tags == {"2a": 485, "2b": 514}
    assert len({d.source_checksum for d in datasets.values()}) == 1  # one file
    assert len({d.checksum for d in datasets.values()}) == 4  # four contents
