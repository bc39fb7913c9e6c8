"""The arena board is built by an RQ job, never by the request: a page or API read before the first
build says it is being computed (API 202) and queues the job once; a real worker builds it and the
page then shows it "as of" when it was computed; a judgment that settles queues a rebuild, and
until the worker has run the page shows the previous board saying a newer one is being computed."""

import django_rq
from django.urls import reverse
from rq import SimpleWorker

from tests.generative_support import compare
from validation.queue import next_example_for
from validation.services import record_validation


def _arena_jobs(queue) -> list[str]:
    return [job.func_name for job in queue.jobs if job.func_name == "leaderboard.jobs.rebuild_arena_board"]


def _get(client, capture, name, code):
    """One request, its on-commit work (the enqueue) run as it would be after a real request."""
    with capture(execute=True):
        return client.get(reverse(name, args=[code]))


def _run_worker(capture) -> None:
    with capture(execute=True):
        django_rq.get_worker("default", worker_class=SimpleWorker).work(burst=True)


def test_reads_queue_one_build_a_worker_makes_it_and_a_settled_judgment_queues_the_next(
    client, annotator, validator, chat_task, endpoint_server, default_queue, django_capture_on_commit_callbacks,
):
    examples = [compare(user=annotator, task=chat_task, prompt=f"tell me about the harbour {i}", preference="a") for i in range(4)]
    round = chat_task.current_round()
    with django_capture_on_commit_callbacks(execute=True):
        for _ in examples[:3]:
            record_validation(example=next_example_for(validator=validator, round=round), validator=validator, label="correct")
    default_queue.empty()  # what the settles queued: this test starts from reads alone

    api = _get(client, django_capture_on_commit_callbacks, "api-arena", chat_task.code)
    page = _get(client, django_capture_on_commit_callbacks, "leaderboard:arena", chat_task.code).content.decode()

    assert api.status_code == 202 and api.json() == {"status": "computing", "as_of": None, "computing": True}
    assert 'data-arena-state="computing"' in page and "being computed" in page and "data-arena-model=" not in page
    assert 'hx-trigger="every 3s"' in page
    assert _arena_jobs(default_queue) == ["leaderboard.jobs.rebuild_arena_board"]  # two reads, one job

    _run_worker(django_capture_on_commit_callbacks)

    ready = _get(client, django_capture_on_commit_callbacks, "api-arena", chat_task.code)
    page = _get(client, django_capture_on_commit_callbacks, "leaderboard:arena", chat_task.code).content.decode()
    assert ready.status_code == 200 and ready.json()["status"] == "ready" and ready.json()["battles"] == 3
    assert ready.json()["as_of"] is not None and ready.json()["computing"] is False
    assert 'data-arena-state="ready"' in page and "As of " in page and page.count("data-arena-model=") == 2
    assert "every 3s" not in page and not _arena_jobs(default_queue)

    with django_capture_on_commit_callbacks(execute=True):
        record_validation(example=next_example_for(validator=validator, round=round), validator=validator, label="correct")
    assert _arena_jobs(default_queue) == ["leaderboard.jobs.rebuild_arena_board"]  # queued by the settle itself

    stale = _get(client, django_capture_on_commit_callbacks, "api-arena", chat_task.code).json()
    page = _get(client, django_capture_on_commit_callbacks, "leaderboard:arena", chat_task.code).content.decode()
    assert stale["computing"] is True and stale["battles"] == 3
    assert 'data-arena-state="recomputing"' in page and "a newer board is being computed" in page
    assert _arena_jobs(default_queue) == ["leaderboard.jobs.rebuild_arena_board"]  # still one

    _run_worker(django_capture_on_commit_callbacks)

    fresh = _get(client, django_capture_on_commit_callbacks, "api-arena", chat_task.code).json()
    assert fresh["computing"] is False and fresh["battles"] == 4
