"""The speech recognition kind: the model is wrong when the WER of its transcript against the
annotator's (after the normalisation of case, punctuation and numbers) is above the task's threshold;
audio classification is wrong when the labels differ (no database)."""

import pytest

from dynabench.errors import RuleError
from tasks.kinds import get_spec

SPEECH = get_spec("speech_recognition")
CONFIG = {"model_wrong": {"rule": "wer_above", "threshold": 0.3}, "perf_metric": "wer"}


def wrong(transcript, *references, config=CONFIG):
    return SPEECH.model_wrong(config, {"transcripts": list(references)}, {"transcript": transcript})


def test_case_punctuation_and_numbers_do_not_count():
    assert wrong("turn on two lights", "Turn on 2 lights!") is False
    assert wrong("it's fifty percent", "It’s 50%.") is False


def test_one_word_in_four_wrong_is_within_a_threshold_of_0_3_and_two_are_not():
    assert wrong("turn on two nights", "turn on two lights") is False  # WER 0.25
    assert wrong("turn off two nights", "turn on two lights") is True  # WER 0.5


def test_the_threshold_defaults_to_0_3():
    config = {"model_wrong": {"rule": "wer_above"}, "perf_metric": "wer"}
    assert wrong("a b c d", "a b c x", config=config) is False
    assert wrong("a b", "a b c d e f", config=config) is True


def test_the_best_of_several_transcripts_counts():
    assert wrong("colour of the sky", "color of the sky", "colour of the sky") is False


def test_an_empty_transcript_is_refused_and_one_is_kept_collapsed():
    with pytest.raises(RuleError) as refused:
        SPEECH.clean_target(CONFIG, {}, {"transcripts": ["  "]})
    assert refused.value.field == "transcript"
    assert SPEECH.clean_target(CONFIG, {}, {"transcript": " two  words "}) == {"transcripts": ["two words"]}


def test_audio_classification_is_wrong_when_the_labels_differ():
    spec = get_spec("audio_classification")
    config = {"model_wrong": {"rule": "label_differs"}, "labels": ["yes", "no"]}
    assert spec.model_wrong(config, {"label": "yes"}, {"label": "no", "probs": {"yes": 0.4, "no": 0.6}}) is True
    assert spec.model_wrong(config, {"label": "yes"}, {"label": "yes", "probs": {"yes": 0.6, "no": 0.4}}) is False
