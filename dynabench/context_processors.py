"""Template context every page gets beyond Django's own."""

from django.conf import settings


def model_wait(request) -> dict:
    """``model_wait_s``: the longest a page waits for a model's answer (``DYNABENCH_MODEL_WAIT_S``,
    seconds), which the pages say while they wait."""
    return {"model_wait_s": settings.DYNABENCH_MODEL_WAIT_S}
