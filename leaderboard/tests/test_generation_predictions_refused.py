"""A generation predictions file with a missing or extra uid, a wrong language pair or a non-string
translation is refused whole, each offender named with its line; nothing is stored."""

import json

import pytest

from dynabench.errors import RuleError
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import make_dataset, predictions_jsonl
from tasks.models import MLModel, Task

CONFIG = {
    "context_fields": [{"name": "language_pair"}], "input_fields": [{"name": "source"}], "model_inputs": ["source"],
    "language_pair_field": "language_pair", "model_wrong": {"rule": "chrf_below"}, "perf_metric": "bleu",
}
ITEMS = [("a", "eng_Latn-fra_Latn", "Hello.", "Bonjour."), ("b", "eng_Latn-deu_Latn", "Thank you.", "Danke.")]
GOOD = [{"uid": "a", "translation": "Bonjour.", "language_pair": "eng_Latn-fra_Latn"}, {"uid": "b", "translation": "Danke."}]


@pytest.fixture
def task(db):
    task = Task.objects.create(code="mt", name="MT", kind="generation", collecting=False, config=CONFIG)
    make_dataset(task, "mt-devtest", [(u, {"source": s, "language_pair": p}, {"references": [r]}, p) for u, p, s, r in ITEMS],
                 round_number=None)
    return task


def test_a_good_file_is_stored(task, researcher):
    model = submit_predictions(user=researcher, task=task, upload=predictions_jsonl(GOOD), name="ok")
    assert model.kind == "predictions"


@pytest.mark.parametrize("rows, expected", [
    (GOOD[:1], "no prediction for 1 of 2 items of mt-devtest: b"),
    (GOOD + [{"uid": "c", "translation": "x"}], "unknown uid: line 3: c"),
    ([GOOD[0], {**GOOD[1], "language_pair": "eng_Latn-fra_Latn"}],
     "wrong language_pair: line 2: b has language_pair 'eng_Latn-fra_Latn', the item's is 'eng_Latn-deu_Latn'"),
    ([{**GOOD[0], "translation": ["Bonjour."]}, GOOD[1]], "the translation is not a string: line 1: list"),
    ([{"uid": "a", "label": "x"}, GOOD[1]], 'not an object with "uid" and "translation": line 1'),
])
def test_a_bad_file_is_refused_naming_the_offender(task, researcher, rows, expected):
    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=task, upload=predictions_jsonl(rows), name="bad")
    assert info.value.code in ("bad_predictions", "incomplete_predictions")
    assert expected in info.value.message
    assert not MLModel.objects.filter(task=task).exists()
