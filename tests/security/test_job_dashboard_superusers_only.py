"""Finding 5: ``/django-rq/`` is for superusers only.

Old code: django-rq checked staff status, and task owners are staff, so an owner of one
task could empty the evaluation queue of every task.
"""

import django_rq
import pytest
from django.core.cache import cache


@pytest.fixture
def staff_owner(owner):
    owner.is_staff = True
    owner.save(update_fields=["is_staff"])
    return owner


@pytest.fixture
def evaluation_queue():
    """The evaluation queue with one job waiting in it, emptied again afterwards."""
    queue = django_rq.get_queue("evaluation", is_async=True, commit_mode="auto")  # enqueue now, outside the test transaction
    queue.empty()
    queue.enqueue("builtins.len", "abc")
    yield queue
    queue.empty()
    cache.clear()


def _index(queue) -> int:
    from django_rq.settings import QUEUES_LIST

    return next(i for i, q in enumerate(QUEUES_LIST) if q["name"] == queue.name)


def test_a_staff_task_owner_is_refused_every_dashboard_page(client, staff_owner, evaluation_queue):
    client.force_login(staff_owner)
    index = _index(evaluation_queue)

    assert client.get("/django-rq/").status_code == 403
    assert client.get(f"/django-rq/queues/{index}/").status_code == 403
    assert client.post(f"/django-rq/queues/{index}/empty/", {"post": "yes"}).status_code == 403
    assert client.get("/django-rq/stats.json").status_code == 403
    assert evaluation_queue.count == 1


def test_anonymous_visitors_are_sent_to_the_admin_login(client, evaluation_queue):
    response = client.get("/django-rq/")

    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_a_superuser_sees_and_runs_the_dashboard(client, admin_user, evaluation_queue):
    client.force_login(admin_user)
    index = _index(evaluation_queue)

    assert client.get("/django-rq/").status_code == 200
    assert client.get(f"/django-rq/queues/{index}/").status_code == 200
    assert client.post(f"/django-rq/queues/{index}/empty/", {"post": "yes"}).status_code in (200, 302)
    assert evaluation_queue.count == 0
