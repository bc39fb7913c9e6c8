"""Stable error codes raised by ``tasks/services.py`` (sent to API clients as ``code``)."""

from enum import StrEnum


class TaskErrorCode(StrEnum):
    MODEL_NOT_OF_TASK = "model_not_of_task"
    MODEL_NOT_LOADABLE = "model_not_loadable"
    BAD_ROUND_DATES = "bad_round_dates"
    LABELS_ALREADY_PUBLIC = "labels_already_public"
    NO_LABELS_TO_PUBLISH = "no_labels_to_publish"
    UNKNOWN_ROLE = "unknown_role"
    USER_BANNED = "user_banned"
    LAST_OWNER = "last_owner"
    CANNOT_BAN_OWNER = "cannot_ban_owner"
    STALE_SETTINGS = "stale_settings"
    BAD_LOOP_RULE = "bad_loop_rule"
    NO_MODEL_IN_LOOP = "no_model_in_loop"
    NEEDS_A_MODEL = "kind_needs_a_model"
    LABEL_OUT_OF_REACH = "label_out_of_reach"
    REMOVED_LABEL_IN_USE = "removed_label_in_use"
    ROUND_NOT_OPEN = "round_not_open"
    LAST_MODEL_IN_LOOP = "last_model_in_loop"
    BAD_CONTEXTS_FROM = "bad_contexts_from"
    BAD_DEFINITION = "bad_definition"
    TASK_EXISTS = "task_exists"


class TargetErrorCode(StrEnum):
    """Codes a task kind's spec raises when the annotator's target does not fit (``tasks/kinds/``).

    The values are the same as ``annotation.error_codes.AnnotationErrorCode``'s, so an API
    client sees one code whichever layer refused the target.
    """

    REQUIRED = "required"
    INVALID_LABEL = "invalid_label"
    INVALID_ANSWER = "invalid_answer"
    ANSWER_NOT_IN_PASSAGE = "answer_not_in_passage"
    INVALID_REFERENCE = "invalid_reference"
    BAD_SELECTION = "bad_selection"
