"""``manage.py requeue_stale_runs``: put runs left ``running`` by a dead worker back in the queue."""

from django.core.management.base import BaseCommand

from leaderboard.jobs import requeue_stale_runs


class Command(BaseCommand):
    help = "Re-queue evaluation runs whose worker stopped (stale heartbeat); fail them after the last attempt."

    def handle(self, *args, **options):
        return requeue_stale_runs()
