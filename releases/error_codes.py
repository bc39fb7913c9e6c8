"""Stable codes of the ``RuleError``\\ s the releases app raises (a 4xx on every surface)."""

from enum import StrEnum


class ReleaseErrorCode(StrEnum):
    NOT_OWNER = "release_not_owner"
    IN_PROGRESS = "release_in_progress"
    NO_DATASETS = "release_no_datasets"
    UNKNOWN_DATASET = "release_unknown_dataset"
    NOTHING_CHANGED = "release_nothing_changed"
