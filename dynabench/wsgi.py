"""The web process's WSGI entry point (gunicorn in ``make run``, and ``runserver``).

Before Django starts (and so before the registry's warm-up thread can import torch), it sets how
many threads one forward of a model may use in this process: ``WEB_TORCH_THREADS`` from the
environment, default 1. A web process answers one example per request, on several gunicorn
threads at once. On the 2-core machine a one-example MiniLM forward took 8.1 ms on one torch
thread and 9.2 ms on two; on two it lost another 1.5-2 ms when it ran on a thread other than
the process's main one, as it does on gunicorn's threads (on one thread it did not; we measured
this, we did not trace why). ``benchmarks/web_torch_threads.py`` runs both side by side.
Workers (evaluation, training) are not web processes: they keep their own settings.
"""

import os
import sys

from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application


def web_torch_threads(environ=os.environ) -> int:
    """Return ``WEB_TORCH_THREADS`` (default 1) as an int >= 1; raise ``ImproperlyConfigured`` otherwise."""
    value = environ.get("WEB_TORCH_THREADS", "1")
    try:
        threads = int(value)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ImproperlyConfigured(f"WEB_TORCH_THREADS must be a whole number of threads, 1 or more (got {value!r}).")
    return threads


def limit_torch_threads(threads: int) -> None:
    """Make every forward of this process use ``threads`` threads: OpenMP and MKL read the
    environment when torch is imported; a torch imported already (``runserver`` sets Django up
    before it loads this module) is told directly."""
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(threads)


limit_torch_threads(web_torch_threads())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
application = get_wsgi_application()
