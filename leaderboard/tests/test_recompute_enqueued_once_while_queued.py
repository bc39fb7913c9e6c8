"""Evaluation jobs that end one after another enqueue one leaderboard rebuild per task while it waits
in the queue: a rebuild queued and not started yet reads their results too. Once it has started
(or ran), the next result enqueues a new one."""


from leaderboard import jobs, queueing


def _enqueue(task, capture):
    with capture(execute=True):  # django-rq enqueues when the transaction commits
        queueing.enqueue_recompute(task.pk)


def _rebuilds(queue):
    return [job for job in queue.jobs if job.func_name == "leaderboard.jobs.recompute_leaderboard"]


def test_twenty_results_queue_one_rebuild(sentiment_task, default_queue, django_capture_on_commit_callbacks):
    for _ in range(20):
        _enqueue(sentiment_task, django_capture_on_commit_callbacks)

    assert [job.args for job in _rebuilds(default_queue)] == [(sentiment_task.pk,)]


def test_a_rebuild_taken_off_the_queue_lets_the_next_result_queue_another(
    sentiment_task, nli_task, default_queue, django_capture_on_commit_callbacks,
):
    _enqueue(sentiment_task, django_capture_on_commit_callbacks)
    _enqueue(nli_task, django_capture_on_commit_callbacks)  # each task has its own
    assert len(_rebuilds(default_queue)) == 2
    default_queue.empty()  # a worker took them (or the queue was lost)

    _enqueue(sentiment_task, django_capture_on_commit_callbacks)

    assert [job.args for job in _rebuilds(default_queue)] == [(sentiment_task.pk,)]
