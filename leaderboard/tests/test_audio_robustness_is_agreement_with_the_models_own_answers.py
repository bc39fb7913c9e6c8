"""Robustness of an audio model is its agreement with its own answers when every clip is heard with
noise at 10 dB SNR and 1.1 times faster: a classifier that ignores what it hears scores 1.0, a tiny
random one the share of its labels that stay the same, and a transcriber one minus the error rate
(the task's CER here: a random model's one-word babble has a WER of 1 or more) of its transcripts of
the variants against its transcripts of the originals; each checked against the model's answers on
variants made by hand."""

import pytest

from leaderboard.models import EvaluationRun
from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import evaluate_now
from tasks.data.audio_files import read_model_samples
from tasks.loop.registry import load_predictor
from tasks.metrics.speech import corpus_scores
from tests.audio_board_support import build_constant_classifier, clip_dataset, faster_by_hand, noisy_by_hand, stored_clips
from tests.audio_support import COMMANDS, audio_task, build_tiny_audio_classifier, build_tiny_ctc


def _variant_inputs(clips):
    """Per item ``u<i>``: its noisy clip, then its sped-up clip, made by hand."""
    inputs = []
    for i, sha in enumerate(clips):
        samples = read_model_samples(sha)
        inputs += [{"clip": noisy_by_hand(samples, f"u{i}")}, {"clip": faster_by_hand(samples)}]
    return inputs


def _scored(owner, task, directory, name):
    model = register_model_directory(actor=owner, task=task, path=directory, name=name, published=True)
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done", run.error
    return run


def test_an_audio_classifier_is_as_robust_as_its_labels_stay(owner, tmp_path):
    # given six stored clips in a scoring dataset of the spoken-commands task
    task = audio_task(owner)
    clips = stored_clips(task, owner)
    clip_dataset(task, "commands-test", clips, [{"label": COMMANDS[i % 3]} for i in range(len(clips))])

    # when a classifier that always says "stop" and a tiny random one are evaluated
    constant = _scored(owner, task, build_constant_classifier(tmp_path / "constant", "stop"), "constant")
    directory = build_tiny_audio_classifier(tmp_path / "random", COMMANDS, seed=2)
    random = _scored(owner, task, directory, "random")

    # then the constant one is fully robust, and the random one keeps the share of labels a hand count finds
    assert constant.robustness == 1.0
    predictor = load_predictor(directory, task=task)
    original = [o["label"] for o in predictor.predict([{"clip": sha} for sha in clips])]
    perturbed = [o["label"] for o in predictor.predict(_variant_inputs(clips))]
    kept = sum(label == original[k // 2] for k, label in enumerate(perturbed))
    assert random.robustness == pytest.approx(kept / (2 * len(clips)))
    assert random.metrics["perturbed_items"] == {"robustness": len(clips), "fairness": 0}
    assert random.metrics["inferences"] == 3 * len(clips)


def test_a_transcriber_is_as_robust_as_its_transcripts_stay(owner, tmp_path):
    # given six stored clips in a scoring dataset of the spoken-sentences task, ranked by CER
    task = audio_task(owner, "spoken-sentences")
    task.config["perf_metric"] = "cer"
    task.save(update_fields=["config"])
    clips = stored_clips(task, owner)
    clip_dataset(task, "sentences-test", clips, [{"transcripts": ["go left now"]} for _ in clips])

    # when a tiny random CTC model is evaluated
    directory = build_tiny_ctc(tmp_path / "ctc", seed=1)
    run = _scored(owner, task, directory, "ctc")

    # then robustness is 1 - CER of its transcripts of the variants against its own of the originals
    predictor = load_predictor(directory, task=task)
    original = [o["transcript"] for o in predictor.predict([{"clip": sha} for sha in clips])]
    perturbed = [o["transcript"] for o in predictor.predict(_variant_inputs(clips))]
    cer = corpus_scores(perturbed, [[original[k // 2]] for k in range(len(perturbed))])["cer"]
    assert 0.0 < cer < 1.0
    assert run.robustness == pytest.approx(1.0 - cer)
