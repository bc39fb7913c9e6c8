"""Stable codes of the rule errors raised by ``leaderboard`` services (``RuleError.code``)."""

from enum import StrEnum


class LeaderboardErrorCode(StrEnum):
    # weights
    BAD_WEIGHT = "bad_weight"
    # archives
    NOT_AN_ARCHIVE = "not_an_archive"
    ARCHIVE_TOO_BIG = "archive_too_big"
    UNSAFE_PATH = "unsafe_path"
    LINK_IN_ARCHIVE = "link_in_archive"
    SPECIAL_FILE_IN_ARCHIVE = "special_file_in_archive"
    PICKLE_WEIGHTS = "pickle_weights"
    NO_WEIGHTS = "no_weights"
    BAD_CONFIG = "bad_config"
    WRONG_ARCHITECTURE = "wrong_architecture"
    LABEL_MISMATCH = "label_mismatch"
    DAILY_LIMIT = "daily_limit"
    # prediction files
    BAD_PREDICTIONS = "bad_predictions"
    INCOMPLETE_PREDICTIONS = "incomplete_predictions"
    NO_SCORING_DATASETS = "no_scoring_datasets"
    # models and runs
    NOT_OWNER = "not_owner"
    BAD_NAME = "bad_name"
    BAD_DIRECTORY = "bad_directory"
