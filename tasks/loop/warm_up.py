"""Web processes keep the models in the loop loaded: at start-up, and whenever a model becomes ready.

A web process that started before a model finished training (on a first run, every one) would
otherwise load it on the first example that asks, seconds to minutes on a loaded machine. So:

1. Whatever may change which ready models are in a loop announces it on the Redis channel
   ``CHANNEL`` once its transaction commits (``announce_on_commit``): a model trained, retrained,
   uploaded or published (``tasks.signals.leaderboard_inputs_changed``, which
   ``tasks.loop.training.runs.train_model_record`` sends as it stores the weights), a round opened
   or closed (``round_status_changed``), a model put into or taken out of a round's loop
   (``m2m_changed`` on ``Round.target_models``). ``connect_receivers`` wires them (``tasks/apps.py``).
2. Each web process started with ``DYNABENCH_WARM_MODELS=1`` runs ``watch`` in a thread: it
   imports torch and the transformers modules a load uses (``preload``: seconds of CPU that a
   process started before any model was ready would otherwise spend on its first load), subscribes
   to the channel, then warms (``warm_pass``), then warms again on every announcement.
   Subscribing before the first pass means nothing announced after it is missed; a lost Redis
   connection is subscribed again, with a pass, so an announcement made meanwhile is caught up.
3. A pass loads the ready Hugging Face models in the loop of open rounds into this process's
   registry (``tasks.loop.registry.warm_up``), the most recently changed last and at most the
   registry's ``DYNABENCH_REGISTRY_MAX_MODELS`` (more would evict each other in turn). Models
   already cached cost one dictionary look-up; an example asking for a model while it loads waits
   for that one load (the registry's per-model lock).

Announcements carry no data: a pass reads the database, so an announcement is never stale.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models.signals import m2m_changed
from redis.exceptions import RedisError

from tasks.models import MLModel, Round
from tasks.signals import leaderboard_inputs_changed, round_status_changed

logger = logging.getLogger(__name__)

CHANNEL = "dynabench:loop-models-changed"
RETRY_S = 5.0  # seconds between attempts to subscribe while Redis does not answer


def _connection():
    import django_rq

    return django_rq.get_connection("default")


def announce() -> None:
    """Tell every watching web process (``watch``) to warm the models in the loop now.

    Redis being down is logged and ignored: the watchers warm on their next (re)subscription."""
    try:
        _connection().publish(CHANNEL, b"1")
    except RedisError as error:
        logger.warning("model warm-up: could not announce a change of the models in the loop: %s", error)


def announce_on_commit(*_args, **_kwargs) -> None:
    """``announce`` once the current transaction commits (at once outside one); usable as a receiver."""
    transaction.on_commit(announce)


def _loop_changed(sender, action, **kwargs) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        announce_on_commit()


def connect_receivers() -> None:
    """Announce (``announce_on_commit``) on every signal that may change the ready models in a loop (step 1)."""
    leaderboard_inputs_changed.connect(announce_on_commit, dispatch_uid="tasks.warm_up.inputs")
    round_status_changed.connect(announce_on_commit, dispatch_uid="tasks.warm_up.round_status")
    m2m_changed.connect(_loop_changed, sender=Round.target_models.through, dispatch_uid="tasks.warm_up.loop")


def models_to_warm() -> list[MLModel]:
    """The ready Hugging Face models in the loop of open rounds, least recently changed first, at most
    ``settings.DYNABENCH_REGISTRY_MAX_MODELS`` (the most recently changed ones)."""
    from tasks.loop.registry import models_in_the_loop
    from tasks.loop.training.records import model_ready

    ready = [model for model in models_in_the_loop().order_by("updated_at", "pk") if model_ready(model)]
    keep = max(1, int(getattr(settings, "DYNABENCH_REGISTRY_MAX_MODELS", 4)))
    return ready[-keep:]


def preload() -> None:
    """Import what loading a model needs (torch and the transformers modules of
    ``settings.RQ_WORKER_PRELOAD``) and prepare the registry (``prepare_to_fork``), loading no model.
    Never raises: a missing module is left for the first load to report."""
    import importlib

    from tasks.loop.registry import prepare_to_fork

    try:
        for name in getattr(settings, "RQ_WORKER_PRELOAD", ()):
            if name.split(".")[0] in ("torch", "transformers"):
                importlib.import_module(name)
        prepare_to_fork()
    except Exception:  # noqa: BLE001 - the first load will say what is wrong
        logger.exception("model registry: preloading torch and transformers failed")


def warm_pass() -> str:
    """Load ``models_to_warm()`` into this process's registry; return the registry's one-line summary.

    Never raises: an unmigrated database or a broken record is logged, so the web process serves on."""
    from tasks.loop.registry import warm_up

    try:
        summary = warm_up(models_to_warm())
        logger.info("model registry: %s", summary)
        return summary
    except Exception:  # noqa: BLE001 - the warm-up must never stop a web process
        logger.exception("model registry: warm-up failed")
        return "warm-up failed"
    finally:
        close_old_connections()


def watch(*, stop: threading.Event | None = None, on_pass: Callable[[str], None] | None = None) -> None:
    """Warm now and on every announcement until ``stop`` is set (steps 2 and 3); the warm-up thread's body.

    ``on_pass(summary)`` is called after each pass (tests wait on it). Returns when ``stop`` is set
    (checked at least every ``RETRY_S`` seconds); never raises.
    """
    stop = stop or threading.Event()
    preload()
    warmed_without_redis = False
    while not stop.is_set():
        try:
            pubsub = _connection().pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(CHANNEL)
        except RedisError as error:
            if not warmed_without_redis:  # start-up still warms what is in the loop
                _report(on_pass, warm_pass())
                warmed_without_redis = True
            logger.warning("model warm-up: cannot subscribe to %s (retrying): %s", CHANNEL, error)
            stop.wait(RETRY_S)
            continue
        try:
            _report(on_pass, warm_pass())
            while not stop.is_set():
                if pubsub.get_message(timeout=RETRY_S) is None:
                    continue
                while pubsub.get_message(timeout=0) is not None:
                    pass  # announcements that came together: one pass reads them all
                _report(on_pass, warm_pass())
        except RedisError as error:
            logger.warning("model warm-up: lost the subscription to %s (subscribing again): %s", CHANNEL, error)
            stop.wait(RETRY_S)
        finally:
            try:
                pubsub.close()
            except RedisError:
                pass


def _report(on_pass, summary: str) -> None:
    if on_pass is not None:
        on_pass(summary)
