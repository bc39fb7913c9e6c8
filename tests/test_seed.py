from tasks.models import Context, Round, Task
from tasks.data.seed import DEFAULT_TASK_CODES, seed_default_tasks


def test_it_creates_the_four_default_tasks_with_round_one_open(db):
    seed_default_tasks()

    assert sorted(Task.objects.values_list("code", flat=True)) == sorted(DEFAULT_TASK_CODES)
    for task in Task.objects.all():
        assert task.current_round().number == 1
        assert task.current_round().status == Round.Status.OPEN


def test_it_is_idempotent(db):
    seed_default_tasks()
    counts = (Task.objects.count(), Round.objects.count(), Context.objects.count())

    seed_default_tasks()

    assert (Task.objects.count(), Round.objects.count(), Context.objects.count()) == counts
