"""``manage.py remove_stale_chat_drafts``: remove the conversations nobody judged or touched for
``annotation.chat_drafts.DRAFT_MAX_AGE_S`` (they never become examples)."""

from django.core.management.base import BaseCommand

from annotation.chat_drafts import DRAFT_MAX_AGE_S, expire_drafts


class Command(BaseCommand):
    help = f"Remove chat drafts untouched for {DRAFT_MAX_AGE_S // 3600} hours (never judged: not examples)."

    def handle(self, *args, **options):
        removed = expire_drafts()
        self.stdout.write(f"Removed {removed} stale chat draft(s).")
