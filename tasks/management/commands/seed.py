"""``manage.py seed [--demo]``: the four default tasks with their seed scoring datasets (and, with
``--demo``, demo users). Idempotent."""

from django.core.management.base import BaseCommand

from dynabench.roles import ensure_role_groups
from tasks.data.seed import seed_default_tasks, seed_demo_users, seed_scoring_datasets


class Command(BaseCommand):
    help = (
        "Create or update the default tasks nli, qa, sentiment and hate-speech (round 1 open, starter contexts) "
        "and their seed scoring datasets (<code>-seed-dev, public; <code>-seed-test, hidden). "
        "With --demo, also create demo users with random passwords, printed once."
    )

    def add_arguments(self, parser):
        parser.add_argument("--demo", action="store_true", help="Also create demo users (admin, owner, annotators, validators, researcher).")

    def handle(self, *args, **options):
        ensure_role_groups()
        tasks = seed_default_tasks()
        datasets = [dataset for task in tasks for dataset in seed_scoring_datasets(task)]
        summary = (
            f"seeded {len(tasks)} tasks: {', '.join(t.code for t in tasks)}; "
            f"{len(datasets)} seed scoring datasets ({sum(d.items.count() for d in datasets)} items)"
        )
        if not options["demo"]:
            return summary
        users = seed_demo_users()
        self.stdout.write("Demo logins (passwords are shown only when a user is created):")
        for user in users:
            password = user.password or "(existing user: password unchanged; reset it with manage.py changepassword)"
            self.stdout.write(f"  {user.username:<11} {password:<18}  {user.roles}")
        created = sum(1 for u in users if u.password)
        return f"{summary}; demo users: {created} created, {len(users) - created} existing"
