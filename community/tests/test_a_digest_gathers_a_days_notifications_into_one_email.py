"""A user who chose the daily digest gets no email per notification; ``send_notification_digests``
sends one email listing them all, once."""

from django.core import mail
from django.core.management import call_command

from community.models import Notification
from community.services import notify, set_preferences


def test_the_digest_lists_the_days_notifications_once(annotator):
    annotator.email = "annie@example.org"
    annotator.save()
    set_preferences(user=annotator, email=True, digest=True, muted=[])
    for i in range(3):
        notify(user=annotator, kind="example_validated", key=f"example:{i}", message=f"Example {i} was validated.", url="/my/examples/")
    assert mail.outbox == []

    call_command("send_notification_digests")
    call_command("send_notification_digests")  # nothing new: no second email

    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["annie@example.org"]
    assert "3 notifications" in mail.outbox[0].subject
    assert all(f"Example {i} was validated." in mail.outbox[0].body for i in range(3))
    assert not Notification.objects.filter(emailed_at__isnull=True).exists()
