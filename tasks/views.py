"""Task pages: the list of active tasks, one task's page, one round's page.

Counts come from ``annotation/selectors.py`` (one grouped query for all rounds shown),
never from a second copy of the vMER rule.
"""

from django.shortcuts import get_object_or_404, render

from annotation.selectors import counts_by_round, user_counts
from tasks.models import Task


def task_list(request):
    """Active tasks, each with its current round, examples collected and vMER."""
    tasks = list(Task.objects.filter(active=True))
    current = {task.pk: task.current_round() for task in tasks}
    counts = counts_by_round([r for r in current.values() if r is not None])
    rows = [(task, current[task.pk], counts.get(current[task.pk].pk) if current[task.pk] else None) for task in tasks]
    return render(request, "tasks/task_list.html", {"rows": rows})


def task_detail(request, code):
    """Instructions (Markdown, cleaned), every round with its statistics and models in the loop."""
    task = get_object_or_404(Task, code=code, active=True)
    rounds = list(task.rounds.order_by("-number").prefetch_related("target_models"))
    counts = counts_by_round(rounds)
    my_counts = user_counts(request.user, task=task) if request.user.is_authenticated else None
    return render(request, "tasks/task_detail.html", {
        "task": task,
        "current": task.current_round(),
        "rounds": [(r, counts[r.pk]) for r in rounds],
        "my_counts": my_counts,
    })
