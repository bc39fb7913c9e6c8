"""Stable codes of the rules that refuse a community action (task proposals).

Services raise ``dynabench.errors.RuleError(code, message, field=...)`` (or ``FieldErrors``) with
one of these codes; pages show the message next to the field.
"""

from enum import StrEnum


class CommunityErrorCode(StrEnum):
    INVALID_PROPOSAL = "invalid_proposal"
    PROPOSALS_RATE_LIMITED = "proposals_rate_limited"
    NOT_PROPOSER = "not_proposer"
    NOT_REVIEWER = "not_reviewer"
    NOT_REVISABLE = "proposal_not_revisable"
    ALREADY_DECIDED = "proposal_already_decided"
    CODE_TAKEN = "task_code_taken"
    MESSAGE_REQUIRED = "review_message_required"
