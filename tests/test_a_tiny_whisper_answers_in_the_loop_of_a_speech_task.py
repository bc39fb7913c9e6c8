"""A ``WhisperForConditionalGeneration`` directory (safetensors, its feature extractor, a tokenizer and a
generation config, no remote code) is accepted through the platform's model registration for a speech
recognition task, and as the round's target model it answers an annotator's clip with a transcript the
server judges by its WER against the annotator's."""

import pytest

from annotation.services import create_example
from leaderboard.services import register_model_directory
from tasks.data.audio import ingest_audio
from tasks.metrics.speech import utterance_wer
from tasks.models import Context
from tests.audio_support import audio_task, build_tiny_whisper, clip_file

pytestmark = pytest.mark.usefixtures("private_media", "one_torch_thread")


def test_a_tiny_whisper_answers_an_annotators_clip_with_a_transcript(owner, annotator, tmp_path):
    task = audio_task(owner, "spoken-sentences")
    ingest_audio(task=task, acting_user=owner, files=[clip_file("c.wav", freq=300, seconds=2.5)], round_number=1)
    context = Context.objects.get(round__task=task)
    directory = build_tiny_whisper(tmp_path / "whisper")
    assert (directory / "preprocessor_config.json").is_file() and not list(directory.glob("*.py"))

    model = register_model_directory(actor=owner, task=task, path=directory, name="tiny-whisper")
    task.rounds.get(number=1).target_models.add(model)
    example = create_example(user=annotator, context=context, input={}, target={"transcripts": ["turn on the lights"]})

    transcript = example.model_output["transcript"]
    assert isinstance(transcript, str) and transcript.strip()
    assert "<|" not in transcript  # the prompt's special tokens are not part of the answer
    wrong = utterance_wer(transcript, ["turn on the lights"]) > task.config["model_wrong"]["threshold"]
    assert example.model_wrong is wrong
