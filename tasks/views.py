"""Task pages: the list of active tasks and one task's page."""

from django.shortcuts import get_object_or_404, render

from tasks.models import Task


def task_list(request):
    tasks = Task.objects.filter(active=True).prefetch_related("rounds")
    return render(request, "tasks/task_list.html", {"tasks": tasks})


def task_detail(request, code):
    task = get_object_or_404(Task, code=code, active=True)
    return render(request, "tasks/task_detail.html", {"task": task, "rounds": task.rounds.all()})
