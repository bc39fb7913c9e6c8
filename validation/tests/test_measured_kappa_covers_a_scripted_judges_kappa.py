"""A judge scripted from a confusion matrix of known Cohen's κ, measured end to end: the examples are real
DynaSent round 2 sentences (their gold labels, with a seeded 30 % given a wrong writer's label, so the
people's consensus is ``incorrect`` there), the judge is a stand-in endpoint answering each example from
the matrix, the voting job asks it through the gate and ``judge_report`` measures it. The 95 % bootstrap
interval of the measured κ holds the matrix's κ in at least 19 of 20 seeded runs."""

import json

import numpy as np
import pytest

from annotation.models import Example, ValidationState
from tasks.models import Round
from tests.endpoint_fixtures import allow_local_server
from tests.judge_server import start_judge_server
from tests.shared_data import shared_file
from validation.judge import judge_examples, set_judge
from validation.judge_agreement import expected_kappa
from validation.judge_selectors import judge_report

RUNS, PER_RUN = 20, 150
PREVALENCE = [0.7, 0.3]  # consensus correct, incorrect
CONFUSION = [[0.85, 0.15], [0.25, 0.75]]  # P(judge says j | consensus i)
VERDICTS = ["correct", "incorrect"]
STATE = {"correct": ValidationState.VERIFIED_CORRECT, "incorrect": ValidationState.VERIFIED_INCORRECT}


@pytest.fixture
def judge_server(settings):
    server = start_judge_server()
    allow_local_server(settings, server.url)
    yield server
    server.stop()


@pytest.fixture
def sentences():
    path = shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["sentence"], r["gold_label"]) for r in rows if r["gold_label"] in ("positive", "negative", "neutral")]


def _round_of_examples(task, number, rng, sentences, author, server):
    round = Round.objects.create(task=task, number=number)
    context = round.contexts.create(uid="c", data={})
    field = task.config["input_fields"][0]["name"]
    picked = rng.choice(len(sentences), size=PER_RUN, replace=False)
    examples = []
    for i, index in enumerate(picked):
        sentence, gold = sentences[index]
        consensus = VERDICTS[int(rng.random() < PREVALENCE[1])]
        label = gold if consensus == "correct" else next(l for l in task.labels if l != gold)
        server.answers[f"k{number}-{i}"] = VERDICTS[int(rng.random() < CONFUSION[VERDICTS.index(consensus)][1])]
        examples.append(Example(round=round, context=context, author=author, input={field: f"[k{number}-{i}] {sentence}"},
                                target={"label": label}, model_output={"label": next(l for l in task.labels if l != label)},
                                model_wrong=True, validation_state=STATE[consensus]))
    Example.objects.bulk_create(examples)
    return round


@pytest.mark.slow
def test_the_interval_holds_the_scripted_kappa_in_19_of_20_runs(sentiment_task, annotator, owner, make_endpoint_model,
                                                                 judge_server, sentences):
    true_kappa = expected_kappa(PREVALENCE, CONFUSION)
    judge = make_endpoint_model(sentiment_task, name="scripted-judge", url=judge_server.url, max_concurrency=8)
    covered, measured = 0, []
    for run in range(RUNS):
        rng = np.random.default_rng(run)
        round = _round_of_examples(sentiment_task, 100 + run, rng, sentences, annotator, judge_server)
        set_judge(round=round, model=judge, acting_user=owner)

        summary = judge_examples(round.pk)

        assert f"{PER_RUN} votes (0 unparsed)" in summary, summary
        kappa = judge_report(round, seed=run)["judges"][0]["vs_consensus"]["kappa"]
        measured.append(kappa["value"])
        covered += kappa["low"] <= true_kappa <= kappa["high"]
    assert covered >= 19, (true_kappa, covered, measured)
    assert abs(float(np.mean(measured)) - true_kappa) < 0.05
