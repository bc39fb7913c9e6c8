"""Where the round's diversity report put an example is in the API: ``cluster`` and ``near_duplicate_of`` on the
author's example (null in a hidden split), with ``group_size`` on a round's validated examples; the report
itself (rule, clusters with their top terms) is ``GET /rounds/{id}/diversity`` and the client's
``round_diversity()``, for the task's owners."""

from rest_framework.authtoken.models import Token

from annotation.diversity_models import ExampleDiversity, RoundDiversity, RoundSimilarity
from annotation.models import Example, ValidationState
from dynabench_client import DynabenchClient
from tasks.models import Dataset
from tests.api.conftest import client_for

CLUSTERS = [{"cluster": 0, "size": 2, "share": 1.0, "terms": ["not", "bad"], "examples": [], "assigned": 3, "vmer": 0.67}]


def _round_with_a_report(task, author):
    round1 = task.current_round()
    context = round1.contexts.first()
    first, copy, hidden = (
        Example.objects.create(round=round1, context=context, author=author, input={"text": f"Not bad at all {i}."},
                               target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=True,
                               validation_state=ValidationState.VERIFIED_CORRECT, split=split)
        for i, split in enumerate(("dev", "dev", "test"))
    )
    for example in (first, copy, hidden):
        ExampleDiversity.objects.create(example=example, round=round1, cluster=0, representative=first,
                                        group_size=3)
    RoundSimilarity.objects.create(round=round1, threshold=0.85, mode="warn")
    RoundDiversity.objects.create(round=round1, status="done", figures={"examples": 3, "vendi": 1.2, "clusters": CLUSTERS})
    Dataset.objects.create(task=task, round=round1, name="sentiment-r1-test", split="test", label_visibility="hidden")
    return first, copy, hidden


def test_the_author_reads_each_examples_cluster(sentiment_task, annotator):
    first, copy, hidden = _round_with_a_report(sentiment_task, annotator)
    author = client_for(annotator)

    answers = {e.pk: author.get(f"/api/v1/examples/{e.pk}").json() for e in (first, copy, hidden)}

    assert (answers[first.pk]["cluster"], answers[first.pk]["near_duplicate_of"]) == (0, None)
    assert (answers[copy.pk]["cluster"], answers[copy.pk]["near_duplicate_of"]) == (0, first.pk)
    assert answers[hidden.pk]["labels_hidden"] and answers[hidden.pk]["cluster"] is None


def test_a_rounds_validated_examples_carry_their_cluster_and_group(sentiment_task, annotator, owner):
    first, copy, _ = _round_with_a_report(sentiment_task, annotator)

    rows = client_for(owner).get("/api/v1/tasks/sentiment/rounds/1/examples").json()["results"]

    assert [(r["id"], r["cluster"], r["near_duplicate_of"], r["group_size"]) for r in rows] == [
        (first.pk, 0, None, 3), (copy.pk, 0, first.pk, 3)]


def test_owners_read_the_rounds_report_with_the_client_and_others_are_refused(sentiment_task, annotator, owner, live_server):
    _round_with_a_report(sentiment_task, annotator)
    round_id = sentiment_task.current_round().pk

    body = DynabenchClient(api_key=Token.objects.create(user=owner).key, base_url=live_server.url).round_diversity(round_id)
    refused = client_for(annotator).get(f"/api/v1/rounds/{round_id}/diversity")

    assert refused.status_code == 403
    assert (body["threshold"], body["mode"], body["status"]) == (0.85, "warn", "done")
    assert body["figures"]["clusters"][0]["terms"] == ["not", "bad"]
