"""Crowd progress: a validation is one step of the validator's crowd study.

A paid crowd worker validates inside a study session (``annotation.crowd``) whose progress counts
the validations they record, toward the study's ``required``. Each new user-mode verdict and each
gold check counts once (``validation.services``, ``validation.gold_checks``); an owner's decision,
or an owner revising it, does not.
"""

from annotation import crowd
from annotation.models import CrowdStudy


def note_validation(*, validator, round) -> int:
    """Count one validation by ``validator`` in ``round`` toward their unfinished validating study
    sessions (``annotation.crowd.note_progress``); return how many sessions it counted for. Call in
    the transaction that stores the validation."""
    return crowd.note_progress(user=validator, round=round, activity=CrowdStudy.Activity.VALIDATE)
