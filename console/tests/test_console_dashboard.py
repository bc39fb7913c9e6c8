"""The round dashboard: examples per hour and vMER over time (plots), counts and vMER per model
in the loop, the validation queue, flagged examples to decide, unused contexts; a bounded
number of queries whatever the round's size."""

from datetime import timedelta

from django.utils import timezone

from annotation import counters
from annotation.models import Example
from tasks.models import Context, MLModel
from console.selectors import round_dashboard
from validation.tests.conftest import make_example


def _models(task):
    round = task.current_round()
    a = MLModel.objects.create(task=task, name="model-a", path="/nowhere/a")
    b = MLModel.objects.create(task=task, name="model-b", path="/nowhere/b")
    round.target_models.add(a, b)
    return round, a, b


def test_the_dashboard_counts_per_hour_and_per_model(owner, annotator, sentiment_task):
    round, a, b = _models(sentiment_task)
    for i in range(3):
        make_example(sentiment_task, annotator, model_wrong=i < 2, model=a)
    make_example(sentiment_task, annotator, model_wrong=True, model=b, flagged_count=2)
    earlier = make_example(sentiment_task, annotator, model_wrong=False, model=b)
    Example.objects.filter(pk=earlier.pk).update(created_at=timezone.now() - timedelta(hours=3))
    counters.recount_rounds([round.pk])  # as after any write that bypasses the models
    make_example(sentiment_task, annotator, model_wrong=True, model=a, retracted=True)

    board = round_dashboard(round)

    assert [b.collected for b in board.per_hour] == [1, 4]
    per_model = {m.name: m for m in board.per_model}
    assert (per_model["model-a"].collected, per_model["model-a"].fooled) == (3, 2)
    assert (per_model["model-b"].collected, per_model["model-b"].fooled) == (2, 1)
    assert board.queue_depth == 3  # the pending examples that fooled a model (not retracted)
    assert board.flagged_count == 1 and board.flagged[0].flagged_count == 2
    used = Example.objects.filter(round=round).values("context").distinct().count()
    assert board.unused_contexts == Context.objects.filter(round=round, times_used=0).count() and used >= 1
    assert [s["name"] for s in board.vmer_over_time_by_model] == ["model-a", "model-b"]


def test_the_page_draws_the_plots_and_the_tables(client, owner, annotator, sentiment_task):
    round, a, b = _models(sentiment_task)
    make_example(sentiment_task, annotator, model_wrong=True, model=a)
    make_example(sentiment_task, annotator, model_wrong=False, model=b)
    client.force_login(owner)

    page = client.get(f"/tasks/sentiment/console/rounds/{round.number}/dashboard").content.decode()

    assert page.count('class="dash-plot"') == 2 and 'aria-label="Examples per hour"' in page
    assert "model-a" in page and "model-b" in page and 'data-count="collected">2<' in page


def test_the_dashboard_reads_a_bounded_number_of_queries(owner, annotator, sentiment_task, django_assert_max_num_queries):
    round, a, b = _models(sentiment_task)
    for i in range(40):
        make_example(sentiment_task, annotator, model_wrong=i % 2 == 0, model=a if i % 3 else b)
    with django_assert_max_num_queries(16):
        round_dashboard(round)


def test_a_large_round_reads_the_figures_its_job_computed(owner, annotator, sentiment_task, settings, monkeypatch):
    from validation import round_statistics
    from validation.jobs import compute_round_agreement

    round, a, b = _models(sentiment_task)
    monkeypatch.setattr(round_statistics, "FIGURES_LIVE_LIMIT", 2)
    for i in range(3):
        make_example(sentiment_task, annotator, model_wrong=True, model=a)

    before = round_dashboard(round)  # larger than the live limit, not computed yet: asks for the job
    compute_round_agreement(round.pk)
    after = round_dashboard(round)
    make_example(sentiment_task, annotator, model_wrong=True, model=b)
    moved_on = round_dashboard(round)

    assert before.figures_pending and before.queue_depth == 0
    assert not after.figures_stale and after.figures_as_of is not None and after.queue_depth == 3
    assert moved_on.figures_stale and moved_on.queue_depth == 3  # as of the job, until it runs again
    assert [m.collected for m in before.per_model] == [3, 0] and [m.collected for m in moved_on.per_model] == [3, 1]  # tallies: live
