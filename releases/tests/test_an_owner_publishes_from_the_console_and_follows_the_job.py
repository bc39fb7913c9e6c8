"""The console's Releases page: only owners open it; the owner saves the card's free text, publishes,
the RQ job is queued (progress shown), and once the worker ran it the release page shows the card
with the owner's text and the platform's figures."""

from django.urls import reverse

from releases.jobs import build_release
from releases.models import Release


def test_only_owners_open_the_releases_page(client, dynasent_task, outsider):
    client.force_login(outsider)
    assert client.get(reverse("releases:console", args=["dynasent"])).status_code == 403
    assert client.post(reverse("releases:publish", args=["dynasent"])).status_code == 403
    assert not Release.objects.exists()


def test_an_owner_writes_the_card_publishes_and_the_job_builds_it(client, dynasent_task, owner, default_queue,
                                                                  django_capture_on_commit_callbacks):
    client.force_login(owner)
    page = client.get(reverse("releases:console", args=["dynasent"]))
    assert page.status_code == 200 and b"Publish release" in page.content and b"Releases</a>" in page.content

    saved = client.post(reverse("releases:console", args=["dynasent"]), {
        "motivation": "Sentiment examples that fool models.", "intended_uses": "Training and evaluating classifiers.",
        "limitations": "English Yelp reviews only."})
    with django_capture_on_commit_callbacks(execute=True):
        with_job = client.post(reverse("releases:publish", args=["dynasent"]), {})

    assert saved.status_code == 302 and with_job.status_code == 302
    release = Release.objects.get()
    assert release.status == "queued" and [job.id for job in default_queue.jobs] == [release.job_id]
    row = client.get(reverse("releases:progress", args=["dynasent", release.pk]))
    assert b"<progress" in row.content and b"every 2s" in row.content

    summary = build_release(release.pk)

    assert summary.startswith("release dynasent 1.0.0: 4320 examples")
    page = client.get(reverse("releases:release", args=["dynasent", "1.0.0"]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "English Yelp reviews only." in text and "Sentiment examples that fool models." in text
    assert "Collection process" in text and "validators mark it correct" in text
    assert "@misc{dynabench-dynasent-1-0-0" in text and "cff-version: 1.2.0" in text
    listing = client.get(reverse("releases:list", args=["dynasent"])).content.decode()
    assert "1.0.0" in listing and Release.objects.get().sha256 in listing


def test_a_second_request_while_one_builds_is_refused(client, dynasent_task, owner, default_queue):
    client.force_login(owner)
    client.post(reverse("releases:publish", args=["dynasent"]), {})
    client.post(reverse("releases:publish", args=["dynasent"]), {})

    assert Release.objects.count() == 1
