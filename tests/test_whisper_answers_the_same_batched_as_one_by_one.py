"""The registry runs a Whisper model batched and gets the answers it gives clip by clip: every window
is padded to the length the encoder takes whatever the batch, a clip longer than the window is
transcribed window by window and joined, and a task asking for more new tokens than the decoder holds
gets answers capped to what it holds rather than an error."""

import pytest

from tasks.loop.registry import load_predictor
from tests.audio_support import audio_task, build_tiny_whisper, noise, sweep, tone

pytestmark = pytest.mark.usefixtures("private_media", "one_torch_thread")


def test_whisper_answers_the_same_batched_as_one_by_one(owner, tmp_path):
    task = audio_task(owner, "spoken-sentences")
    task.config["max_new_tokens"] = 448  # more than the tiny decoder's 32 positions
    transcriber = load_predictor(build_tiny_whisper(tmp_path / "whisper", chunk_seconds=2), task=task)
    long = sweep(seconds=2.5)  # two windows of 2 s
    inputs = [{"clip": tone(seconds=0.4)}, {"clip": noise(seconds=1.3)}, {"clip": long}, {"clip": tone(300, seconds=0.2)}]

    batched = transcriber.predict(inputs, batch_size=4)

    assert batched == transcriber.predict(inputs, batch_size=1)
    assert all(isinstance(o["transcript"], str) and o["transcript"] for o in batched)
    assert len({o["transcript"] for o in batched}) > 1  # the answers depend on what the model hears
    first, rest = transcriber.predict([{"clip": long[:32000]}, {"clip": long[32000:]}])
    assert batched[2]["transcript"] == f"{first['transcript']} {rest['transcript']}"
