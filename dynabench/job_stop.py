"""A stop asked of the job running in this process: long jobs check it between steps and give way.

An RQ worker asked to stop warmly (SIGTERM or Ctrl-C: ``make run`` stopping) would wait for its
current job to end; a training can last an hour. ``leaderboard.worker.ReapingWorker`` therefore
sends its work horse ``STOP_SIGNAL`` (SIGUSR1) as well, whose handler (``install``, set in the
worker before it forks, so every horse has it from its first instruction) calls ``request()``.
A long job checks ``requested()`` between steps (a training between batches:
``tasks.loop.training.fine_tuning.fit``), raises ``JobStopped`` and queues itself again, so the
horse ends within a step and the worker stops with it; the next start goes on with the work.
Jobs that never check it simply finish, as before.
"""

from __future__ import annotations

import signal
import threading

STOP_SIGNAL = signal.SIGUSR1

_requested = threading.Event()


class JobStopped(Exception):
    """Raised by a job that gave way to a stop request (``requested()``) before its work was done."""


def request(*_args) -> None:
    """Ask the running job to stop at its next check (usable as a signal handler)."""
    _requested.set()


def requested() -> bool:
    """True once a stop was asked of this process (``request``)."""
    return _requested.is_set()


def clear() -> None:
    """Forget a stop request (a worker clears it before each job's horse is forked; tests)."""
    _requested.clear()


def install() -> None:
    """Make ``STOP_SIGNAL`` ask for a stop in this process and in the processes it forks from now on
    (instead of the signal's default action, which ends the process). Main thread only."""
    signal.signal(STOP_SIGNAL, request)
