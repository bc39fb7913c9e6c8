"""The owner's button that measures a round's transfer now (``validation.transfer.request_transfer``)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from console.views import owner_console
from dynabench.errors import RuleError
from tasks.models import Round
from validation import transfer


@require_POST
@owner_console
def measure_transfer(request, task, number):
    """POST: queue the transfer job of round ``number`` (every validated example put to every ready model
    not run on it yet), then back to its dashboard with a message saying so, or why not."""
    round = get_object_or_404(Round, task=task, number=number)
    try:
        transfer.request_transfer(round=round, acting_user=request.user)
    except RuleError as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, f"Round {round.number}'s validated examples are queued for the task's other models; "
                                  "the figures below fill in as the job runs.")
    return redirect("console:round_dashboard", code=task.code, number=round.number)
