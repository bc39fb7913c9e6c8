"""Task proposal pages: propose, my proposals, one proposal, revise, and the admins' review queue.
Views parse and render; ``community.proposals`` decides. Every route checks who may see it on the
server: the proposer or an admin sees a proposal (others get a 404), only admins see the queue and
decide (403)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from community import proposals
from community.forms import DecisionForm, ProposalForm
from community.models import TaskProposal
from dynabench.errors import FieldErrors, RuleError


def _show_errors(form, error: RuleError) -> None:
    errors = error.errors if isinstance(error, FieldErrors) else {error.field or "__all__": [error.message]}
    for field, problems in errors.items():
        for problem in problems:
            form.add_error(field if field in form.fields else None, problem)


def _visible(request, pk) -> TaskProposal:
    proposal = get_object_or_404(TaskProposal.objects.select_related("proposer", "task", "reviewed_by"), pk=pk)
    if proposal.proposer_id != request.user.pk and not proposals.can_review(request.user):
        raise Http404("No such proposal.")
    return proposal


@login_required
def propose(request):
    """GET: the proposal form. POST: check and store it (``submit_proposal``), then the proposer's list."""
    form = ProposalForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            proposal = proposals.submit_proposal(proposer=request.user, fields=form.proposal_fields(),
                                                 definition_file=form.cleaned_data["definition"],
                                                 dataset_file=form.cleaned_data.get("dataset"))
        except RuleError as error:
            _show_errors(form, error)
            status = error.status_code
        else:
            messages.success(request, f"Your proposal '{proposal.name}' waits for an admin's review.")
            return redirect("community:proposal", pk=proposal.pk)
    elif request.method == "POST":
        status = 400
    return render(request, "community/propose.html", {"form": form, "revising": None}, status=status)


@login_required
def my_proposals(request):
    """The signed-in user's proposals and where each stands."""
    return render(request, "community/my_proposals.html", {"proposals": proposals.proposals_of(request.user),
                                                            "reviewer": proposals.can_review(request.user)})


@login_required
def proposal_detail(request, pk):
    """One proposal: its values, the definition, the review; the decision form for admins."""
    proposal = _visible(request, pk)
    return render(request, "community/proposal.html", {
        "proposal": proposal, "reviewer": proposals.can_review(request.user),
        "mine": proposal.proposer_id == request.user.pk, "form": DecisionForm(),
    })


@login_required
def revise(request, pk):
    """The proposer revises a proposal sent back for changes (``revise_proposal``)."""
    proposal = _visible(request, pk)
    if proposal.proposer_id != request.user.pk:
        return HttpResponseForbidden("Only the person who proposed this task can revise it.")
    initial = {"code": proposal.code, "name": proposal.name, "kind": proposal.kind, "instructions": proposal.instructions,
               "license": proposal.license, "labels": ", ".join((proposal.definition.get("config") or {}).get("labels", []))}
    form = ProposalForm(request.POST or None, request.FILES or None, initial=initial, revising=True)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            proposals.revise_proposal(proposal=proposal, proposer=request.user, fields=form.proposal_fields(),
                                      definition_file=form.cleaned_data.get("definition"), dataset_file=form.cleaned_data.get("dataset"))
        except RuleError as error:
            _show_errors(form, error)
            status = error.status_code
        else:
            messages.success(request, "Your revised proposal waits for review again.")
            return redirect("community:proposal", pk=proposal.pk)
    elif request.method == "POST":
        status = 400
    return render(request, "community/propose.html", {"form": form, "revising": proposal}, status=status)


@login_required
def review_queue(request):
    """Admins: the proposals waiting for review, oldest first."""
    if not proposals.can_review(request.user):
        return HttpResponseForbidden("Only admins review task proposals.")
    return render(request, "community/review_queue.html", {"proposals": proposals.review_queue(), "form": DecisionForm()})


@login_required
@require_POST
def decide(request, pk):
    """Admins: approve, send back with a message, or reject (``decide_proposal``)."""
    if not proposals.can_review(request.user):
        return HttpResponseForbidden("Only admins review task proposals.")
    proposal = get_object_or_404(TaskProposal, pk=pk)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose approve, ask for changes or reject.")
        return redirect("community:proposal", pk=pk)
    try:
        decided = proposals.decide_proposal(proposal=proposal, reviewer=request.user, decision=form.cleaned_data["decision"],
                                            message=form.cleaned_data["message"])
    except RuleError as error:
        messages.error(request, error.message)
        return redirect("community:proposal", pk=pk)
    messages.success(request, f"'{decided.name}': {decided.get_status_display().lower()}.")
    return redirect("community:review_queue")
