"""``manage.py send_notification_digests``: email the daily digests (run it once a day)."""

from django.core.management.base import BaseCommand

from community.jobs import send_digests


class Command(BaseCommand):
    help = "Email every user who chose a daily digest the notifications not emailed yet; run once a day."

    def handle(self, *args, **options):
        return send_digests()
