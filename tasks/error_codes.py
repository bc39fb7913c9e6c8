"""Stable error codes raised by ``tasks/services.py`` (sent to API clients as ``code``)."""

from enum import StrEnum


class TaskErrorCode(StrEnum):
    MODEL_NOT_OF_TASK = "model_not_of_task"
    MODEL_NOT_LOADABLE = "model_not_loadable"
    BAD_ROUND_DATES = "bad_round_dates"
