import logging
import os
import sys
import threading

from django.apps import AppConfig
from django.conf import settings

logger = logging.getLogger(__name__)


class TasksConfig(AppConfig):
    name = "tasks"

    def ready(self):
        """Warm the model registry when ``DYNABENCH_WARM_MODELS=1`` (set it for web processes only).

        The models in the loop of open rounds are loaded in a background thread, so the process
        starts serving at once; a request that needs a model still loading waits for that one
        load (the registry's per-model lock). Off by default, so tests, ``migrate`` and other
        management commands never load models; under ``runserver`` only the serving child warms up.
        """
        if not settings.DYNABENCH_WARM_MODELS:
            return
        if "runserver" in sys.argv and os.environ.get("RUN_MAIN") != "true":
            return
        threading.Thread(target=_warm_up_models_in_the_loop, name="registry-warm-up", daemon=True).start()


def _warm_up_models_in_the_loop():
    from django.db import close_old_connections

    from tasks.loop.registry import models_in_the_loop, warm_up

    try:
        logger.info("model registry: %s", warm_up(list(models_in_the_loop())))
    except Exception:  # the database may not be migrated yet; the web process must still start
        logger.exception("model registry: warm-up failed")
    finally:
        close_old_connections()
