"""A Redis that restarts empty (here: FLUSHALL on the stack's own Redis) forgets every worker and the
reaper's repeating job: ``/healthz`` would count no worker and nothing would reap. A running worker
notices on its next heartbeat (``leaderboard/worker.py``: ``keep_registered``), registers again and
schedules the reaper again, and the reaper runs: no restart of anything."""

import pytest
import redis
from rq import Worker

from leaderboard.reaper import REAPER_JOB_ID
from tests.worker_stack import WorkerStack

pytestmark = pytest.mark.slow

#: The shortest registration the setting allows: an idle worker beats every 5 s.
WORKER_TTL = 20


def test_a_worker_registers_again_and_the_reaper_runs_again_after_redis_is_emptied(tmp_path_factory, stack_template):
    root = tmp_path_factory.mktemp("emptied-redis")
    stack = WorkerStack(root, stack_template, RQ_WORKER_TTL=str(WORKER_TTL), REAPER_PERIOD_S="2")
    server = redis.Redis(unix_socket_path=str(root / "var" / "redis.sock"), socket_connect_timeout=2)

    def worker_count() -> int:  # what /healthz counts
        try:
            return len(Worker.all(connection=server))
        except redis.RedisError:
            return 0  # the stack's Redis is not up yet

    def reaper_ran() -> bool:
        """The reaper job exists, has run at least once, and waits for its next turn (or runs)."""
        try:
            job = server.hgetall(f"rq:job:{REAPER_JOB_ID}")
        except redis.RedisError:
            return False
        return bool(job.get(b"ended_at")) and job.get(b"status") in (b"scheduled", b"queued", b"started")

    try:
        stack.worker("short", cache=root / "cache", queues=("default",))
        stack.wait_for(lambda: worker_count() >= 1 and reaper_ran(), timeout=300, what="the worker and its reaper")

        server.flushall()
        assert worker_count() == 0 and not server.exists(f"rq:job:{REAPER_JOB_ID}")

        # ``timeout`` only catches a hang: a heartbeat comes every WORKER_TTL - 15 s.
        stack.wait_for(lambda: worker_count() >= 1, timeout=120, what="the worker to register again")
        stack.wait_for(reaper_ran, timeout=120, what="the reaper to be scheduled and run again")
        assert "registered again" in stack.log("short", 200)
    finally:
        stack.stop()
