"""Fairness of an audio model compares speaker groups: on a dataset whose items name their speaker
group (``metadata["speaker"]``, or a ``speaker:<group>`` tag), it is one minus the gap between the
best and the worst group's accuracy, as counted by hand; on a dataset without speaker groups it is
absent, not zero: the run has none, the dataset marks it not applicable, and the leaderboard averages
fairness over the other dataset only."""

import pytest

from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import evaluate_now
from tasks.loop.registry import load_predictor
from tests.audio_board_support import clip_dataset, stored_clips
from tests.audio_support import COMMANDS, audio_task, build_tiny_audio_classifier

GROUPS = [{"speaker": "a"}, {"speaker": "a"}, {"speaker": "b"}, {"speaker": "b"}, {}, {}]
TAGS = ["", "", "", "", "speaker:c", ""]


def test_fairness_is_the_gap_between_speaker_groups_and_absent_without_them(owner, tmp_path):
    # given a tiny random classifier and its own labels on six stored clips
    task = audio_task(owner)
    clips = stored_clips(task, owner)
    directory = build_tiny_audio_classifier(tmp_path / "random", COMMANDS, seed=2)
    own = [o["label"] for o in load_predictor(directory, task=task).predict([{"clip": sha} for sha in clips])]
    other = [next(label for label in COMMANDS if label != mine) for mine in own]
    # targets: group a all right, group b half right, group c (a tag) right, the untagged item right
    labels = [own[0], own[1], own[2], other[3], own[4], own[5]]
    targets = [{"label": label} for label in labels]
    tagged = clip_dataset(task, "clips-tagged", clips, targets, metadata=GROUPS, tags=TAGS)
    untagged = clip_dataset(task, "clips-untagged", clips, targets)

    # when it is evaluated and the leaderboard is built
    model = register_model_directory(actor=owner, task=task, path=directory, name="random", published=True)
    evaluate_now(model)
    rebuild_leaderboard(task.pk)

    # then fairness is 1 - (best group's accuracy - worst group's), counted by hand
    by_group = {}
    for i, group in enumerate(["a", "a", "b", "b", "c", None]):
        if group:
            by_group.setdefault(group, []).append(own[i] == labels[i])
    accuracy = {group: sum(right) / len(right) for group, right in by_group.items()}
    assert accuracy == {"a": 1.0, "b": 0.5, "c": 1.0}
    run = EvaluationRun.objects.get(model=model, dataset=tagged)
    assert run.status == "done", run.error
    assert run.fairness == pytest.approx(1 - (max(accuracy.values()) - min(accuracy.values()))) == 0.5
    assert run.metrics["perturbed_items"]["fairness"] == 5

    # and without speaker groups it is absent, and the leaderboard says it is not applicable there
    plain = EvaluationRun.objects.get(model=model, dataset=untagged)
    assert plain.fairness is None and plain.metrics["perturbed_items"]["fairness"] == 0
    assert plain.robustness == run.robustness
    table = leaderboard_table(task)
    fairness = next(rule for rule in table.rules if rule["metric"] == "fairness")
    assert fairness["not_applicable_on"] == ["clips-untagged"]
    assert table.rows[0].averages["fairness"] == pytest.approx(50.0)
