"""A warm stop ends the worker's command-channel thread at once (``leaderboard/worker.py``:
``ReapingWorker.unsubscribe``). RQ's own order (send UNSUBSCRIBE, then tell the thread to stop) let
the thread, on a busy machine, read the reply before it was told, and sit a minute in its next read:
the stopped worker lingered and ``scripts/run.sh`` shut it down cold. The thread must already be
told to stop when UNSUBSCRIBE goes out, so that the reply itself ends it. And when a message reaches the
thread between the two, it ends first and closes the connection: UNSUBSCRIBE then has nothing to do, and
the stop must not fail on the closed socket."""

import json

import django_rq

from leaderboard.worker import ReapingWorker


def test_the_thread_is_told_to_stop_before_unsubscribe_goes_out_and_ends():
    connection = django_rq.get_connection("default")
    worker = ReapingWorker(["default"], connection=connection)
    for _ in range(5):
        worker.subscribe()
        worker.pubsub.subscribed_event.wait()  # the thread reads replies from here on
        thread, pubsub, told = worker.pubsub_thread, worker.pubsub, []
        send = pubsub.unsubscribe

        def unsubscribe(*args):
            told.append(not thread._running.is_set())  # redis-py's stop flag, as the thread's loop reads it
            return send(*args)

        pubsub.unsubscribe = unsubscribe
        worker.unsubscribe()
        assert told == [True]
        assert not thread.is_alive()
        assert pubsub.connection is None  # closed: its connection went back to the pool


def test_the_stop_ends_cleanly_when_the_thread_closed_the_socket_first():
    connection = django_rq.get_connection("default")
    worker = ReapingWorker(["default"], connection=connection)
    worker.subscribe()
    worker.pubsub.subscribed_event.wait()
    thread, pubsub = worker.pubsub_thread, worker.pubsub
    send, socket = pubsub.unsubscribe, pubsub.connection._sock

    def unsubscribe(*args):
        # a command arrives after the stop flag is cleared: the thread reads it, sees the flag and closes the
        # connection, here while UNSUBSCRIBE is on its way (the socket closed under it, as in a full run)
        connection.publish(worker.pubsub_channel_name, json.dumps({"command": "stop-job", "job_id": "none"}))
        thread.join()
        pubsub.connection = pubsub.connection or pubsub.connection_pool.get_connection()
        pubsub.connection._sock = socket
        return send(*args)

    pubsub.unsubscribe = unsubscribe
    worker.unsubscribe()
    assert not thread.is_alive() and pubsub.connection is None
