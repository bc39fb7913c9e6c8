"""Writing notifications: ``notify`` (create once, email when the user wants it), ``mark_read``,
``set_preferences``. Called from ``community.jobs`` (never from the request that caused the event)
and from the notification pages."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from community.models import Notification, NotificationPreference


def preferences(user) -> NotificationPreference:
    """The user's preferences (an unsaved default row when they never set any)."""
    return NotificationPreference.objects.filter(user=user).first() or NotificationPreference(user=user)


def notify(*, user, kind: str, key: str, message: str, url: str = "") -> Notification | None:
    """Create the notification ``key`` for ``user`` once and email it when the user wants email.

    Returns the notification, or None when the user muted ``kind``. Idempotent: a second call
    with the same ``key`` returns the existing row and sends no second email. The email goes
    through Django's email framework (``EMAIL_URL``/``EMAIL_BACKEND``; providers through
    ``django-anymail``'s backends); a user without an address gets the in-app one only.
    """
    prefs = preferences(user)
    if not prefs.wants(kind):
        return None
    try:
        with transaction.atomic():
            note = Notification.objects.create(user=user, kind=kind, key=key, message=message, url=url)
    except IntegrityError:
        return Notification.objects.get(user=user, key=key)
    if prefs.email and not prefs.digest and user.email:
        send_mail(subject=f"[Dynabench] {Notification.Kind(kind).label}", message=_text(note), from_email=None,
                  recipient_list=[user.email])
        Notification.objects.filter(pk=note.pk).update(emailed_at=timezone.now())
    return note


def _text(note: Notification) -> str:
    """A notification as plain email text: the message, then its link (absolute with ``SITE_URL``)."""
    base = getattr(settings, "SITE_URL", "").rstrip("/")
    return note.message + (f"\n{base}{note.url}" if note.url else "")


def send_digest(user) -> int:
    """Email ``user`` one digest of the notifications not emailed yet (when they want email as a daily
    digest and have an address); mark them emailed; return how many it listed (0: nothing sent)."""
    prefs = preferences(user)
    if not (prefs.email and prefs.digest and user.email):
        return 0
    with transaction.atomic():
        notes = list(Notification.objects.select_for_update().filter(user=user, emailed_at__isnull=True).order_by("created_at", "pk"))
        if not notes:
            return 0
        body = "\n\n".join(_text(n) for n in notes)
        send_mail(subject=f"[Dynabench] {len(notes)} notification{'s' if len(notes) != 1 else ''} today",
                  message=body, from_email=None, recipient_list=[user.email])
        Notification.objects.filter(pk__in=[n.pk for n in notes]).update(emailed_at=timezone.now())
    return len(notes)


def mark_read(*, user, notification_id: int | None = None) -> int:
    """Mark ``user``'s notification ``notification_id`` (or all of them, when None) read; return how many changed."""
    unread = Notification.objects.filter(user=user, read_at__isnull=True)
    if notification_id is not None:
        unread = unread.filter(pk=notification_id)
    return unread.update(read_at=timezone.now())


def set_preferences(*, user, email: bool, muted: list[str], digest: bool = False) -> NotificationPreference:
    """Save ``user``'s preferences: ``email`` on or off, as a daily ``digest`` or one each, ``muted``
    kinds (unknown kinds are dropped)."""
    kinds = [k for k in muted if k in Notification.Kind.values]
    prefs, _ = NotificationPreference.objects.update_or_create(user=user, defaults={"email": email, "digest": digest, "muted": kinds})
    return prefs
