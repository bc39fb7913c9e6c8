"""Audio tasks run end to end like the other kinds, with tiny random wav2vec 2.0 models built on the fly
(safetensors, their own feature extractor; a character CTC tokenizer for speech): the registry runs them
batched (the same answers batched as one by one, padded clips cut back to their own length); a model
answers in the loop on an audio context and the server decides whether the annotator fooled it; a
speech model is scored on a dataset with WER and CER as ``tasks.metrics.speech`` computes them, with a
predictions file of transcripts; a text model is refused for an audio task."""

import json

import pytest

from annotation.services import create_example
from dynabench.errors import RuleError
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun
from leaderboard.services import register_model_directory, submit_predictions
from leaderboard.tests.conftest import predictions_jsonl
from tasks.data.audio import ingest_audio
from tasks.loop.registry import clear_cache, load_predictor
from tasks.metrics.speech import corpus_scores
from tasks.models import Context, Dataset, DatasetItem
from tests.audio_support import (COMMANDS, audio_task, build_tiny_audio_classifier, build_tiny_ctc, clip_file, noise,
                                 sweep, tone)
from tests.tiny_models import build_tiny_classifier


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    clear_cache()
    yield settings.MEDIA_ROOT
    clear_cache()
    cache.clear()


def _with_clips(task, owner, n=4):
    files = [clip_file(f"c{i}.wav", freq=200 + 90 * i, seconds=0.3 + 0.25 * i) for i in range(n)]
    ingest_audio(task=task, acting_user=owner, files=files, round_number=1)
    return list(Context.objects.filter(round__task=task).order_by("id"))


def test_the_registry_answers_the_same_batched_as_one_by_one(owner, tmp_path):
    commands, sentences = audio_task(owner), audio_task(owner, "spoken-sentences")
    inputs = [{"clip": tone(seconds=0.4)}, {"clip": noise(seconds=1.3)}, {"clip": sweep(seconds=0.7)}, {"clip": tone(300, seconds=0.2)}]
    classifier = load_predictor(build_tiny_audio_classifier(tmp_path / "cls", COMMANDS), task=commands)
    batched, single = classifier.predict(inputs, batch_size=4), classifier.predict(inputs, batch_size=1)
    assert [o["label"] for o in batched] == [o["label"] for o in single]
    for b, s in zip(batched, single):
        assert list(b["probs"]) == COMMANDS and b["probs"] == pytest.approx(s["probs"], abs=1e-5)
    transcriber = load_predictor(build_tiny_ctc(tmp_path / "ctc"), task=sentences)
    assert transcriber.predict(inputs, batch_size=4) == transcriber.predict(inputs, batch_size=1)
    with pytest.raises(RuleError, match="needs the audio field 'clip'"):
        transcriber.predict([{"clip": 3}])


def test_an_annotator_fools_an_audio_classifier_in_the_loop(owner, annotator, tmp_path):
    task = audio_task(owner)
    context = _with_clips(task, owner, n=1)[0]
    model = register_model_directory(actor=owner, task=task, path=build_tiny_audio_classifier(tmp_path / "cls", COMMANDS), name="tiny")
    task.rounds.get(number=1).target_models.add(model)
    example = create_example(user=annotator, context=context, input={"note": "whispered"}, target={"label": "stop"})
    assert example.input["clip"] == context.uid
    assert example.model_output["label"] in COMMANDS
    assert example.model_wrong == (example.model_output["label"] != "stop")


def test_a_speech_model_answers_in_the_loop_and_is_scored_with_wer_and_cer(owner, annotator, researcher, tmp_path, media):
    task = audio_task(owner, "spoken-sentences")
    contexts = _with_clips(task, owner)
    directory = build_tiny_ctc(tmp_path / "ctc")
    model = register_model_directory(actor=owner, task=task, path=directory, name="tiny-ctc", published=True)
    task.rounds.get(number=1).target_models.add(model)
    example = create_example(user=annotator, context=contexts[0], input={}, target={"transcripts": ["turn on 2 lights"]})
    assert isinstance(example.model_output["transcript"], str)
    assert example.model_wrong is True  # a random model's characters are not the words

    references = [["turn on two lights"], ["open the door", "open that door"], ["stop"], ["go left now"]]
    dataset = Dataset.objects.create(task=task, name="sentences-test", access="scoring", round=task.rounds.get())
    DatasetItem.objects.bulk_create([
        DatasetItem(dataset=dataset, uid=f"i{n}", input={"clip": c.uid}, target={"transcripts": refs})
        for n, (c, refs) in enumerate(zip(contexts, references))
    ])
    evaluate_model(model.pk)
    for run in EvaluationRun.objects.filter(model=model):
        evaluate_run(run.pk)
    expected = [o["transcript"] for o in load_predictor(directory, task=task).predict([{"clip": c.uid} for c in contexts])]
    run = EvaluationRun.objects.get(model=model, dataset=dataset)
    assert run.status == "done", run.error
    scores = corpus_scores(expected, references)
    assert run.metrics["wer"] == pytest.approx(scores["wer"]) and run.metrics["cer"] == pytest.approx(scores["cer"])
    lines = [json.loads(line) for line in (media / run.predictions_file).read_text().splitlines()]
    assert [line["prediction"]["transcript"] for line in lines] == expected

    exact = submit_predictions(user=researcher, task=task, name="exact", upload=predictions_jsonl(
        [{"uid": f"i{n}", "transcript": refs[-1].upper() + "."} for n, refs in enumerate(references)]))
    evaluate_model(exact.pk)
    for run in EvaluationRun.objects.filter(model=exact):
        evaluate_run(run.pk)
    assert EvaluationRun.objects.get(model=exact).metrics["wer"] == 0.0


def test_a_text_model_is_refused_for_an_audio_task(owner, tmp_path):
    task = audio_task(owner)
    bert = build_tiny_classifier(tmp_path / "bert", COMMANDS)
    with pytest.raises(RuleError, match="feature extractor"):
        register_model_directory(actor=owner, task=task, path=bert, name="bert")
    (bert / "preprocessor_config.json").write_text('{"feature_extractor_type": "Wav2Vec2FeatureExtractor"}')
    with pytest.raises(RuleError, match="ForAudioClassification or \\*ForSequenceClassification model for model_type 'bert'"):
        register_model_directory(actor=owner, task=task, path=bert, name="bert")
