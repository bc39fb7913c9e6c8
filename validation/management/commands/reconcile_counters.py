from django.core.management.base import BaseCommand

from validation.jobs import reconcile_counters


class Command(BaseCommand):
    help = "Recompute examples' validation state and counters, and contexts' times_used; report and fix drift."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="Report drift without fixing it.")

    def handle(self, *args, **options):
        return reconcile_counters(fix=not options["dry_run"])
