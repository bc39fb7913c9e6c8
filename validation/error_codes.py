"""Stable codes for every rule the validation services refuse (``RuleError.code``)."""

from enum import StrEnum


class ValidationErrorCode(StrEnum):
    OWN_EXAMPLE = "own_example"
    ALREADY_VALIDATED = "already_validated"
    UNKNOWN_LABEL = "unknown_label"
    UNKNOWN_MODE = "unknown_mode"
    UNKNOWN_METADATA = "unknown_metadata"
    CORRECTED_LABEL_UNKNOWN = "corrected_label_unknown"
    CORRECTED_ANSWER_NOT_A_SPAN = "corrected_answer_not_a_span"
    CORRECTION_NOT_ALLOWED = "correction_not_allowed"
    FLAG_REASON_REQUIRED = "flag_reason_required"
    NOT_OWNER = "not_owner"
    NOT_VALIDATOR = "not_validator"
    NOT_LEASED = "not_leased"
    TOO_MANY_SKIPS = "too_many_skips"
    RETRACTED = "retracted"
    STALE_FORM = "stale_form"
    ALREADY_SETTLED = "already_settled"
    ROUND_CLOSED = "round_closed"
    NOT_COLLECTING = "not_collecting"
    BAD_RATIOS = "bad_ratios"
    EMPTY_SPLIT = "empty_split"
    SMALL_SPLIT = "small_split"
    BAD_NEXT_LOOP = "bad_next_loop"
    IMPORT_FORMAT = "import_format"
