"""Evaluating a model: one run per dataset, metrics on the worker, reruns replace, nothing duplicated."""

from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, f1_score

from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, evaluate_now, make_dataset, predictions_jsonl

GUESSES = ["positive", "positive", "neutral", "negative", "negative", "positive"]


def test_it_scores_a_submitted_archive_on_every_dataset(submitted_model, sentiment_datasets, media_root):
    # when
    summaries = evaluate_now(submitted_model)
    # then
    assert summaries[0].endswith("2 evaluation runs queued")
    submitted_model.refresh_from_db()
    assert (submitted_model.status, submitted_model.progress, submitted_model.failure_reason) == ("evaluated", 1.0, "")
    runs = {r.dataset.name: r for r in EvaluationRun.objects.filter(model=submitted_model)}
    run = runs["sentiment-r1-dev"]
    assert (run.status, run.progress, run.n_examples) == ("done", 1.0, 6)
    assert run.performance == run.metrics["accuracy"]
    assert 0 <= run.metrics["macro_f1"] <= 1
    assert run.throughput > 0 and run.memory_gib > 0.05
    assert 0 <= run.robustness <= 1 and 0 <= run.fairness <= 1  # s4 and s6 have gendered words and names
    assert set(run.per_tag) == {"food", "service", "room"} and run.per_tag["service"]["n"] == 2
    assert (Path(media_root) / run.predictions_file).is_file()
    assert run.item_results is not None


def test_a_predictions_file_is_scored_with_scikit_learn_and_has_no_efficiency_metrics(researcher, sentiment_task, sentiment_dataset):
    model = submit_predictions(user=researcher, task=sentiment_task, name="guesses",
                               upload=predictions_jsonl([{"uid": s[0], "label": g} for s, g in zip(SENTIMENT_ITEMS, GUESSES)]))
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    gold = [s[2] for s in SENTIMENT_ITEMS]
    assert run.status == "done"
    assert run.metrics["accuracy"] == pytest.approx(accuracy_score(gold, GUESSES))
    assert run.metrics["macro_f1"] == pytest.approx(f1_score(gold, GUESSES, average="macro"))
    assert (run.throughput, run.memory_gib, run.robustness, run.fairness) == (None, None, None, None)
    assert run.per_tag["service"]["accuracy"] == pytest.approx(0.0)  # s2 wrong, s4 wrong


def test_a_rerun_replaces_the_results_and_never_adds_rows(submitted_model, sentiment_dataset):
    evaluate_now(submitted_model)
    first = EvaluationRun.objects.get(model=submitted_model)
    evaluate_model(submitted_model.pk)
    reset = EvaluationRun.objects.get(model=submitted_model)
    assert (reset.pk, reset.status, reset.performance, reset.item_results) == (first.pk, "queued", None, None)
    evaluate_run(reset.pk)
    again = EvaluationRun.objects.get(model=submitted_model)
    assert EvaluationRun.objects.filter(model=submitted_model).count() == 1
    assert again.status == "done" and again.performance == first.performance and again.attempt == first.attempt + 1


def test_qa_models_get_squad_exact_match_and_f1(researcher, qa_task, tiny_qa_dir):
    from leaderboard.services import register_model_directory

    make_dataset(qa_task, "qa-mini", [
        ("q1", {"question": "What year did the museum open?", "passage": "The museum opened in 1921 and hosts many visitors."},
         {"answers": [{"text": "1921", "answer_start": 21}]}, "dates"),
        ("q2", {"question": "Who wrote the first algorithm?", "passage": "Ada Lovelace wrote the first algorithm for a machine."},
         {"answers": [{"text": "Ada Lovelace", "answer_start": 0}]}, ""),
    ])
    qa_task.owners.add(researcher)
    model = register_model_directory(actor=researcher, task=qa_task, path=tiny_qa_dir, name="tiny-qa")
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done", run.error
    assert set(run.metrics) >= {"squad_f1", "exact_match"}
    assert run.performance == run.metrics["squad_f1"]
    assert run.robustness is not None and run.fairness is None  # the questions have no gendered words or names
