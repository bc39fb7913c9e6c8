"""A round's diversity report follows its data: validation settling the tenth fooling example queues the
first report, and once it is done the next is queued when the validated fooling examples have grown by
the set fraction (here a quarter: 10, then 13); a report already queued is not queued twice, and the
job's progress ends at 1."""

import django_rq

from annotation.diversity import refresh, report
from annotation.diversity_models import ExampleDiversity, RoundDiversity
from annotation.models import Example, ValidationState
from tasks.signals import example_settled
from tests.api.conftest import run_worker


def _fooling(round1, author, n, start=0):
    return [Example.objects.create(round=round1, context=round1.contexts.first(), author=author,
                                   input={"text": f"Example number {start + i} is not bad at all."}, target={"label": "negative"},
                                   model_output={"label": "positive"}, model_wrong=True) for i in range(n)]


def _settle(examples, owner, capture):
    """What validation does when it settles an example (``validation.consensus``): the state, then the signal."""
    for example in examples:
        Example.objects.filter(pk=example.pk).update(validation_state=ValidationState.VERIFIED_CORRECT)
        with capture(execute=True):
            example_settled.send(sender=Example, example_id=example.pk, author_id=example.author_id, state="verified_correct")


def _queued_reports() -> int:
    return sum(1 for job in django_rq.get_queue("default").get_jobs() if job.func_name == report.JOB)


def test_the_report_follows_the_rounds_validated_fooling_examples(sentiment_task, annotator, owner, settings,
                                                                  tiny_sentence_encoder, django_capture_on_commit_callbacks):
    settings.DYNABENCH_DIVERSITY_REFRESH = 0.25  # the test suite turns it off
    round1 = sentiment_task.rounds.get(number=1)
    first = _fooling(round1, annotator, 10)
    django_rq.get_queue("default").empty()

    _settle(first[:9], owner, django_capture_on_commit_callbacks)
    assert not RoundDiversity.objects.filter(round=round1).exists()  # nine: too few for a first report
    _settle(first[9:], owner, django_capture_on_commit_callbacks)
    assert RoundDiversity.objects.get(round=round1).status == "queued" and _queued_reports() == 1
    assert not refresh.refresh_if_due(round1.pk)  # already queued: not twice

    run_worker()
    done = RoundDiversity.objects.get(round=round1)
    assert (done.status, done.progress, done.figures["fooling_examples"]) == ("done", 1.0, 10)
    assert ExampleDiversity.objects.filter(round=round1).count() == 10

    more = _fooling(round1, annotator, 3, start=10)
    _settle(more[:2], owner, django_capture_on_commit_callbacks)
    assert RoundDiversity.objects.get(round=round1).status == "done"  # 12 < 10 × 1.25
    _settle(more[2:], owner, django_capture_on_commit_callbacks)
    assert RoundDiversity.objects.get(round=round1).status == "queued"  # 13 ≥ 12.5


def test_when_a_report_is_due():
    assert not refresh.is_due(fooling_now=9, fooling_then=None, growth=0.25)
    assert refresh.is_due(fooling_now=10, fooling_then=None, growth=0.25)
    assert not refresh.is_due(fooling_now=12, fooling_then=10, growth=0.25)
    assert refresh.is_due(fooling_now=13, fooling_then=10, growth=0.25)
    assert not refresh.is_due(fooling_now=9, fooling_then=2, growth=0.25)  # never below the first report's count
    assert not refresh.is_due(fooling_now=1000, fooling_then=10, growth=0)  # 0: off
