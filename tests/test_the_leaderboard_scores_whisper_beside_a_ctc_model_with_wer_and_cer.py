"""A Whisper model and a CTC model registered for the same speech recognition task are both evaluated on
its scoring dataset: each run holds the corpus WER and CER ``tasks.metrics.speech`` computes from the
transcripts the model gives, and the leaderboard ranks both, its performance column the WER of each."""

import pytest

from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import evaluate_now
from tasks.loop.registry import load_predictor
from tasks.metrics.speech import corpus_scores
from tests.audio_board_support import clip_dataset, stored_clips
from tests.audio_support import audio_task, build_tiny_ctc, build_tiny_whisper

pytestmark = pytest.mark.usefixtures("private_media", "one_torch_thread")


def test_the_leaderboard_scores_whisper_and_a_ctc_model_with_wer_and_cer(owner, tmp_path):
    task = audio_task(owner, "spoken-sentences")
    clips = stored_clips(task, owner, n=4)
    references = [["turn on two lights"], ["open the door", "open that door"], ["stop"], ["go left now"]]
    clip_dataset(task, "sentences-test", clips, [{"transcripts": refs} for refs in references])
    directories = {"whisper": build_tiny_whisper(tmp_path / "whisper"), "ctc": build_tiny_ctc(tmp_path / "ctc")}
    models = {name: register_model_directory(actor=owner, task=task, path=path, name=name, published=True)
              for name, path in directories.items()}

    for model in models.values():
        evaluate_now(model)
    rebuild_leaderboard(task.pk)
    table = leaderboard_table(task)

    for name, model in models.items():
        run = EvaluationRun.objects.get(model=model)
        assert run.status == "done", run.error
        transcripts = [o["transcript"] for o in load_predictor(directories[name], task=task).predict([{"clip": c} for c in clips])]
        scores = corpus_scores(transcripts, references)
        assert run.metrics["wer"] == pytest.approx(scores["wer"]) and run.metrics["cer"] == pytest.approx(scores["cer"])
    rows = {row.name: row for row in table.rows}
    assert sorted(rows) == ["ctc", "whisper"] and sorted(row.rank for row in table.rows) == [1, 2]
    for name, model in models.items():  # the task's performance metric is the WER, shown in percent
        assert rows[name].averages["performance"] == pytest.approx(100 * EvaluationRun.objects.get(model=model).metrics["wer"])
