"""``manage.py seed [--demo]`` creates the tasks and demo users once, with random passwords printed once."""

import io
import re

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command

from dynabench.roles import has_role
from tasks.models import Task


def _seed(*args):
    out = io.StringIO()
    call_command("seed", *args, stdout=out)
    return out.getvalue()


def test_it_seeds_the_four_tasks_without_users(db):
    output = _seed()

    assert "seeded 4 tasks: nli, qa, sentiment, hate-speech" in output
    assert Task.objects.count() == 4 and not User.objects.exists()


def test_it_creates_demo_users_in_their_roles_with_the_printed_passwords(db, rf):
    output = _seed("--demo")

    logins = dict(re.findall(r"^  (\S+)\s+(\S+)\s{2,}", output, re.MULTILINE))
    assert set(logins) == {"admin", "owner", "annotator1", "annotator2", "validator1", "validator2", "researcher"}
    assert len(set(logins.values())) == 7 and all(len(p) >= 16 for p in logins.values())
    assert all(authenticate(rf.post("/accounts/login/"), username=u, password=p) for u, p in logins.items())  # login lockout needs the request
    users = {u.username: u for u in User.objects.all()}
    assert users["admin"].is_superuser
    assert all(task.is_owner(users["owner"]) for task in Task.objects.all()) and users["owner"].is_staff
    assert not users["owner"].is_superuser
    assert has_role(users["annotator1"], "annotator") and not has_role(users["annotator1"], "validator")
    assert has_role(users["validator2"], "validator") and has_role(users["researcher"], "researcher")


def test_it_keeps_existing_passwords_and_duplicates_nothing_when_run_again(db, rf):
    first = dict(re.findall(r"^  (\S+)\s+(\S+)\s{2,}", _seed("--demo"), re.MULTILINE))

    second = _seed("--demo")

    assert "demo users: 0 created, 7 existing" in second
    assert "password unchanged" in second and first["admin"] not in second
    assert authenticate(rf.post("/accounts/login/"), username="admin", password=first["admin"])
    assert User.objects.count() == 7 and Task.objects.count() == 4
