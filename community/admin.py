"""The admin's view of task proposals: the same decisions as the review queue
(``community.proposals.decide_proposal``), as actions; only admins see it."""

from django.contrib import admin, messages

from community import proposals
from community.models import TaskProposal
from dynabench.errors import RuleError


@admin.register(TaskProposal)
class TaskProposalAdmin(admin.ModelAdmin):
    """Proposals with their status; approve, ask for changes (with the message typed in the row's
    *Review message*) or reject selected ones. Everything else is read-only: a proposal changes only
    through its proposer's revision or a decision."""

    list_display = ("code", "name", "kind", "proposer", "status", "revision", "created_at")
    list_filter = ("status", "kind")
    search_fields = ("code", "name", "proposer__username")
    readonly_fields = ("proposer", "code", "name", "kind", "instructions", "license", "definition", "definition_text",
                       "dataset_file", "dataset_name", "status", "reviewed_by", "decided_at", "revision", "task",
                       "created_at", "updated_at")
    fields = ("review_message", *readonly_fields)
    actions = ("approve", "ask_for_changes", "reject")

    def has_module_permission(self, request):
        return proposals.can_review(request.user)

    def has_view_permission(self, request, obj=None):
        return proposals.can_review(request.user)

    def has_change_permission(self, request, obj=None):
        return proposals.can_review(request.user) and (obj is None or obj.status == TaskProposal.Status.PENDING)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return proposals.can_review(request.user)

    def _decide(self, request, queryset, decision):
        done = 0
        for proposal in queryset:
            try:
                proposals.decide_proposal(proposal=proposal, reviewer=request.user, decision=decision, message=proposal.review_message)
                done += 1
            except RuleError as error:
                self.message_user(request, f"{proposal.code}: {error.message}", level=messages.ERROR)
        if done:
            self.message_user(request, f"{done} proposal{'s' if done != 1 else ''}: {decision}.")

    @admin.action(description="Approve: create the task, the proposer owns it")
    def approve(self, request, queryset):
        self._decide(request, queryset, "approve")

    @admin.action(description="Ask for changes (the row's review message goes to the proposer)")
    def ask_for_changes(self, request, queryset):
        self._decide(request, queryset, "changes")

    @admin.action(description="Reject")
    def reject(self, request, queryset):
        self._decide(request, queryset, "reject")
