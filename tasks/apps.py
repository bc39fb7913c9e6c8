import os
import sys
import threading

from django.apps import AppConfig
from django.conf import settings


class TasksConfig(AppConfig):
    name = "tasks"

    def ready(self):
        """Announce changes of the models in the loop, and keep them warm when ``DYNABENCH_WARM_MODELS=1``
        (set it for web processes only): ``tasks/loop/warm_up.py``.

        Every process announces (a trained model, an opened round, a model put into a loop), so that
        the web processes warm a model as soon as it is ready, not only at start-up. A web process
        loads the models in the loop of open rounds in a background thread, at once and after each
        announcement, so the process starts serving at once; a request that needs a model still
        loading waits for that one load (the registry's per-model lock). Warming is off by default,
        so tests, ``migrate`` and other management commands never load models; under ``runserver``
        only the serving child warms up.
        """
        from dynabench.metrics import register_source
        from tasks.loop import loop_metrics, warm_up

        register_source("budgets", loop_metrics.budgets)
        register_source("endpoints", loop_metrics.endpoints)
        warm_up.connect_receivers()
        if not settings.DYNABENCH_WARM_MODELS:
            return
        if "runserver" in sys.argv and os.environ.get("RUN_MAIN") != "true":
            return
        threading.Thread(target=warm_up.watch, name="registry-warm-up", daemon=True).start()
