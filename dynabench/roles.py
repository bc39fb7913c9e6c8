"""Roles: Django groups ``annotator``, ``validator``, ``researcher``; task owners are ``Task.owners``;
admins are superusers. ``ensure_role_groups`` creates the groups (run by ``migrate`` and ``seed``).

Roles are granted, not chosen: sign-up puts a new account in ``annotator`` (``SIGNUP_ROLES``)
and, if asked, ``researcher`` (``OPTIONAL_SIGNUP_ROLES``: submitting models is not crowd work);
validating a task comes from its owner or its qualification (``tasks.access.grant_role``); a
site-wide ``validator`` group membership is an admin's grant."""

from django.contrib.auth.models import Group

ROLES = ("annotator", "validator", "researcher")
#: Every new account gets these.
SIGNUP_ROLES = ("annotator",)
#: A new account may ask for these at sign-up.
OPTIONAL_SIGNUP_ROLES = ("researcher",)


def ensure_role_groups() -> None:
    """Create the role groups that do not exist yet."""
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def has_role(user, role: str) -> bool:
    """True if ``user`` is active and in the ``role`` group, or a superuser."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return any(g.name == role for g in user.groups.all())
