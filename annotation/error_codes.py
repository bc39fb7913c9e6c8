"""Stable codes of the rules that refuse an annotation action.

Services raise ``dynabench.errors.RuleError(code, message, field=...)`` with one of these
codes; the REST API returns it as ``{"code", "detail", "field"}`` and the HTMX pages show
``message`` next to ``field``.
"""

from enum import StrEnum


class AnnotationErrorCode(StrEnum):
    # Task, round, context
    TASK_INACTIVE = "task_inactive"
    NOT_COLLECTING = "not_collecting"
    ROUND_CLOSED = "round_closed"
    NO_ROUND = "no_round"
    WRONG_FLOW = "wrong_flow"
    NO_CONTEXT = "no_context"
    CONTEXT_NOT_AVAILABLE = "context_not_available"
    UNKNOWN_STRATEGY = "unknown_strategy"
    # The annotator's input and target
    REQUIRED = "required"
    TOO_LONG = "too_long"
    NULL_CHARACTER = "null_character"
    UNKNOWN_FIELD = "unknown_field"
    UNCHANGED_INPUT = "unchanged_input"
    # (a target that does not fit: ``tasks.error_codes.TargetErrorCode``, raised by the task's spec)
    INVALID_TIME_SPENT = "invalid_time_spent"
    INVALID_METADATA = "invalid_metadata"
    # Limits
    DAILY_CAP_REACHED = "daily_cap_reached"
    RATE_LIMITED = "rate_limited"
    SANDBOX_LIMIT = "sandbox_limit"
    # The model in the loop
    NO_MODEL_IN_LOOP = "no_model_in_loop"
    # The writing assistant and the generator (annotation/assist.py, annotation/generation.py)
    ASSISTANT_OFF = "assistant_off"
    ASSISTANT_FAILED = "assistant_failed"
    BAD_SUGGESTION = "bad_suggestion"
    NOT_A_GENERATOR = "not_a_generator"
    MODEL_FAILED = "model_failed"
    MODEL_IN_TRAINING = "model_in_training"
    # Acting on an example
    NOT_ANNOTATOR = "not_annotator"
    NOT_AUTHOR = "not_author"
    RETRACTED = "retracted"
    UNKNOWN_EXPLANATION = "unknown_explanation"
    EXPLANATION_NOT_APPLICABLE = "explanation_not_applicable"
    FLAG_REASON_REQUIRED = "flag_reason_required"
    # Near-duplicates (annotation/diversity/rules.py)
    NEAR_DUPLICATE = "near_duplicate"
    INVALID_SIMILARITY_RULE = "invalid_similarity_rule"
