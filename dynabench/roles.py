"""Roles: Django groups ``annotator``, ``validator``, ``researcher``; task owners are ``Task.owners``;
admins are superusers. ``ensure_role_groups`` creates the groups (run by ``migrate`` and ``seed``)."""

from django.contrib.auth.models import Group

ROLES = ("annotator", "validator", "researcher")
SIGNUP_ROLES = ROLES


def ensure_role_groups() -> None:
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def has_role(user, role: str) -> bool:
    """True if ``user`` is active and in the ``role`` group, or a superuser."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return any(g.name == role for g in user.groups.all())
