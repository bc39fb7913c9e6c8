"""On an audio task's leaderboard, robustness (noise and speed) and fairness (speaker groups) are part of
the Dynascore as on text tasks: both are measured for two models, converted by the AMRS a hand
computation gives (the change in each metric per point of performance between the two), and each
contributes ``w · x / AMRS`` to the model's Dynascore."""

import pytest

from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.metric_rules import Rule
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import evaluate_now
from tasks.loop.registry import load_predictor
from tests.audio_board_support import build_constant_classifier, clip_dataset, stored_clips
from tests.audio_support import COMMANDS, audio_task, build_tiny_audio_classifier


@pytest.mark.usefixtures("one_torch_thread")  # the random model's answers on the variants depend on the thread count
def test_robustness_and_fairness_enter_the_audio_dynascore(owner, tmp_path):
    # given six stored clips labelled mostly as a tiny random classifier hears them, in two speaker groups
    task = audio_task(owner)
    clips = stored_clips(task, owner)
    directory = build_tiny_audio_classifier(tmp_path / "random", COMMANDS, seed=2)
    own = [o["label"] for o in load_predictor(directory, task=task).predict([{"clip": sha} for sha in clips])]
    labels = own[:3] + [next(label for label in COMMANDS if label not in (own[3], "stop"))] + own[4:]
    assert "stop" not in labels
    clip_dataset(task, "clips-test", clips, [{"label": label} for label in labels],
                 metadata=[{"speaker": "a"}] * 3 + [{"speaker": "b"}] * 3)

    # when that classifier and one that always says "stop" are evaluated and ranked
    models = {
        "random": register_model_directory(actor=owner, task=task, path=directory, name="random", published=True),
        "constant": register_model_directory(actor=owner, task=task, path=build_constant_classifier(tmp_path / "c", "stop"),
                                             name="constant", published=True),
    }
    for model in models.values():
        evaluate_now(model)
    rebuild_leaderboard(task.pk)
    table = leaderboard_table(task)

    # then both axes are measured, converted by their AMRS and counted in each Dynascore
    runs = {name: EvaluationRun.objects.get(model=model) for name, model in models.items()}
    assert runs["constant"].performance == 0.0 and runs["random"].performance == pytest.approx(5 / 6)
    assert runs["constant"].robustness == 1.0 and runs["constant"].fairness == 1.0  # wrong everywhere alike
    assert runs["random"].fairness == pytest.approx(1 - (1.0 - 2 / 3))
    rules = {rule["metric"]: rule for rule in table.rules}
    d_perf = 100 * (runs["random"].performance - runs["constant"].performance)
    for metric in ("robustness", "fairness"):
        assert rules[metric]["rule"] == Rule.AMRS and rules[metric]["weight"] == 1.0
        amrs = abs(100 * (getattr(runs["random"], metric) - getattr(runs["constant"], metric))) / d_perf
        assert rules[metric]["amrs"] == pytest.approx(amrs)
        for row in table.rows:
            value = 100 * getattr(runs[row.name], metric)
            assert row.averages[metric] == pytest.approx(value)
            assert row.contributions[metric] == pytest.approx(row.weights[metric] * value / amrs)
    # and each Dynascore is the sum of its contributions; the ones this test sets (throughput and memory are
    # measured on a loaded machine, and can reorder the two) put the random classifier first
    for row in table.rows:
        assert row.dynascore == pytest.approx(sum(row.contributions.values()))
    set_here = {row.name: sum(row.contributions.get(m, 0.0) for m in ("performance", "robustness", "fairness"))
                for row in table.rows}
    assert set_here["random"] > set_here["constant"]
