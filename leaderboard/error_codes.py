"""Stable codes of the rule errors raised by ``leaderboard`` services (``RuleError.code``)."""

from enum import StrEnum


class LeaderboardErrorCode(StrEnum):
    # weights
    BAD_WEIGHT = "bad_weight"
    BAD_MISSING_METRIC = "bad_missing_metric"
    # archives
    NOT_AN_ARCHIVE = "not_an_archive"
    ARCHIVE_TOO_BIG = "archive_too_big"
    STORAGE_QUOTA = "storage_quota"
    ARCHIVE_GONE = "archive_gone"
    UNSAFE_PATH = "unsafe_path"
    LINK_IN_ARCHIVE = "link_in_archive"
    SPECIAL_FILE_IN_ARCHIVE = "special_file_in_archive"
    PICKLE_WEIGHTS = "pickle_weights"
    NO_WEIGHTS = "no_weights"
    BAD_CONFIG = "bad_config"
    WRONG_ARCHITECTURE = "wrong_architecture"
    LABEL_MISMATCH = "label_mismatch"
    DAILY_LIMIT = "daily_limit"
    UPLOAD_RATE = "upload_rate"
    # prediction files
    BAD_PREDICTIONS = "bad_predictions"
    INCOMPLETE_PREDICTIONS = "incomplete_predictions"
    NO_SCORING_DATASETS = "no_scoring_datasets"
    # what a task takes
    WRONG_SUBMISSION = "wrong_submission"
    # data-centric selections
    BAD_SELECTION = "bad_selection"
    NO_POOL = "no_pool"
    # models and runs
    NOT_OWNER = "not_owner"
    NOT_RESEARCHER = "not_researcher"
    BAD_NAME = "bad_name"
    BAD_DIRECTORY = "bad_directory"
