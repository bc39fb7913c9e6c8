from django.core.management.base import BaseCommand

from annotation.generated_images import grace_period, remove_unjudged_images


class Command(BaseCommand):
    help = ("Remove generated images (text-to-image tasks) that no example references, once older than "
            "DYNABENCH_GENERATED_IMAGE_GRACE_S (annotation/generated_images.py).")

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="Count what would be removed; remove nothing.")

    def handle(self, *args, **options):
        removed = remove_unjudged_images(dry_run=options["dry_run"])
        verb = "Would remove" if options["dry_run"] else "Removed"
        self.stdout.write(f"{verb} {removed.records} generated image(s) no example references "
                          f"({removed.bytes} bytes, {removed.files} stored file(s)); grace period {grace_period()}.")
