"""The leaderboard evaluates a model behind a transcriptions API on a speech dataset like a local model:
every clip's 16 kHz copy is sent (up to the endpoint's concurrency at once), the transcripts it answers
are scored with WER and CER as ``tasks.metrics.speech`` computes them, the noisy and sped-up variants of
each clip are sent too (the robustness axis), and a second evaluation of the same settings reads the
response cache instead of asking the server again."""

import pytest

from leaderboard.models import EvaluationRun
from leaderboard.tests.conftest import evaluate_now
from tasks.metrics.speech import corpus_scores
from tasks.models import Dataset, DatasetItem

REFERENCES = [["turn on two lights"], ["open the door", "open that door"], ["stop"], ["go left now"]]
SCRIPTED = ["Turn on 2 lights.", "open the doors", "stop", "go right now"]


@pytest.mark.django_db
def test_the_endpoints_transcripts_are_scored_with_wer_and_cer(speech_task_with_clips, make_transcription_endpoint,
                                                              transcription_server):
    task, contexts = speech_task_with_clips
    dataset = Dataset.objects.create(task=task, name="sentences-test", access="scoring", round=task.rounds.get())
    DatasetItem.objects.bulk_create([
        DatasetItem(dataset=dataset, uid=f"i{n}", input={"clip": c.uid}, target={"transcripts": refs})
        for n, (c, refs) in enumerate(zip(contexts, REFERENCES))
    ])
    model = make_transcription_endpoint(task, max_concurrency=2)
    transcription_server.scripted = list(SCRIPTED)

    evaluate_now(model)

    run = EvaluationRun.objects.get(model=model, dataset=dataset)
    assert run.status == "done", run.error
    assert len(transcription_server.requests) == 3 * 4 and {r["rate"] for r in transcription_server.requests} == {16000}
    assert run.robustness is not None  # the variants' transcripts against the originals'
    originals = transcription_server.requests[:4]  # all asked before any variant, so answered with the scripted texts
    # each request's own answer: two run at once, so the order answered need not be the order received
    transcripts = [r["answer"] for r in sorted(originals, key=lambda r: r["frames"])]  # the dataset's order: its clips grow 0.25 s each
    scores = corpus_scores(transcripts, REFERENCES)
    assert run.metrics["wer"] == pytest.approx(scores["wer"]) and run.metrics["cer"] == pytest.approx(scores["cer"])
    assert sorted(transcripts) == sorted(SCRIPTED) and scores["wer"] > 0  # which clip got which text varies

    run.status = "queued"
    run.save(update_fields=["status"])
    evaluate_now(model)
    run.refresh_from_db()
    assert run.status == "done" and run.metrics["wer"] == pytest.approx(scores["wer"])
    assert len(transcription_server.requests) == 3 * 4  # every answer came from the response cache
