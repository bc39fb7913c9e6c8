"""Reading notifications."""

from community.models import Notification


def unread_count(user) -> int:
    """How many of ``user``'s notifications are unread (0 for an anonymous user)."""
    if not getattr(user, "is_authenticated", False):
        return 0
    return Notification.objects.filter(user=user, read_at__isnull=True).count()


def recent(user, limit: int = 50):
    """``user``'s newest notifications, newest first."""
    return Notification.objects.filter(user=user)[:limit]
