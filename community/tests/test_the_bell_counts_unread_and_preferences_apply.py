"""The navigation's bell shows the unread count; the list marks one or all read (HTMX or not); a muted
kind is not notified and email can be turned off."""

from django.core import mail
from django.test import Client
from django.urls import reverse

from community.models import Notification
from community.services import notify


def test_bell_mark_read_and_preferences(annotator):
    annotator.email = "annie@example.org"
    annotator.save()
    browser = Client()
    browser.force_login(annotator)
    for i in range(2):
        notify(user=annotator, kind="example_validated", key=f"example:{i}", message=f"<b>Example {i}</b> was validated.")

    page = browser.get(reverse("annotation:task_list")).content.decode()
    listing = browser.get("/notifications/").content.decode()
    first = Notification.objects.filter(user=annotator).order_by("pk").first()
    fragment = browser.post(f"/notifications/{first.pk}/read/", HTTP_HX_REQUEST="true").content.decode()
    saved = browser.post("/notifications/preferences/", {"muted": ["model_failed"]})  # email box unticked: off
    notify(user=annotator, kind="model_failed", key="model_failed:1", message="muted")
    notify(user=annotator, kind="example_validated", key="example:9", message="in-app only")
    browser.post("/notifications/read/")

    assert 'id="unread-count">2<' in page
    assert "&lt;b&gt;Example 0&lt;/b&gt;" in listing and "<b>Example" not in listing  # plain text, escaped
    assert "1 unread" in fragment and "<html" not in fragment
    assert saved.status_code == 302
    assert not Notification.objects.filter(key="model_failed:1").exists()
    assert Notification.objects.get(key="example:9").emailed_at is None
    assert len(mail.outbox) == 2  # the two sent before email was turned off
    assert not Notification.objects.filter(user=annotator, read_at__isnull=True).exists()
