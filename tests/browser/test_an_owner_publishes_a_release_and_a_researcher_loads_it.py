"""In Chromium, on the real DynaSent data imported as two closed rounds (dev sets public, test sets
hidden): the owner opens the console's Releases tab, writes the card's free text (Markdown), saves it
and publishes a release; the row shows the job's progress bar, the RQ job runs (a burst worker in this
process) and the row, polled by htmx, turns into the published 1.0.0. The public release page shows
the version, every file with its sha256, the card rendered with the owner's text and the citation.
A researcher who is not logged in goes from the task page to its releases and that page, downloads
the Parquet files over HTTP from its links (each checked against the sha256 the page shows) and
loads them with ``datasets.load_dataset("parquet", data_files=...)``: one ``dev`` split of 4,320
rows whose ``label`` is a ``ClassLabel`` of the task's labels; no hidden set is linked or served.

No page logs a console error, and neither page scrolls sideways at 390 px. With
``DYNABENCH_SCREENSHOTS=<folder>`` it saves the console's Releases tab and the public release page
at 1280 px (``release-publish.png``, ``release-page.png``) and at 390 px (``...-390x844.png``)."""

import hashlib
import urllib.error
import urllib.request

import datasets
import pytest
from playwright.sync_api import expect

from releases.models import Release
from releases.tests.conftest import dynasent_task  # noqa: F401 (the release tests' fixture: DynaSent as two closed rounds)
from tasks.models import DatasetItem
from tests.browser_support import (DESKTOP, HANG_MS, PHONE, browser_only, console_errors, fresh_page, horizontal_overflow, log_in,
                                   run_queued_jobs, save_screenshot)

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

CARD = {
    "motivation": "Sentences that **fool** sentiment models, collected to train sturdier ones.",
    "intended_uses": "Training and evaluating three-way sentiment classifiers.",
    "limitations": "English only; round 1 is *Yelp* reviews.",
}
LABELS = ["positive", "negative", "neutral"]


def test_an_owner_publishes_release_1_0_0_and_a_researcher_loads_its_parquet_files(
        browser, live_server, client, dynasent_task, owner, default_queue, tmp_path):  # noqa: F811
    # 1. The owner writes the card's free text on the console's Releases tab.
    with fresh_page(browser, live_server) as page:
        errors = console_errors(page)
        log_in(page, client, owner, live_server)
        page.goto("/tasks/dynasent/console/")
        page.get_by_role("link", name="Releases", exact=True).click()
        page.wait_for_url("**/tasks/dynasent/console/releases/")
        expect(page.locator("section", has_text="Publish a release")).to_contain_text("2 hidden sets")
        ticks = page.locator("input[name=datasets]")
        assert ticks.count() == 2 and not any(ticks.nth(i).is_checked() for i in range(2))
        publish_form = page.locator("form", has=page.get_by_role("button", name="Publish release"))
        expect(publish_form).to_contain_text("round 1 · dev · dynasent-r1-dev (3600 items)")
        expect(publish_form).to_contain_text("round 2 · dev · dynasent-r2-dev (720 items)")
        for field, text in CARD.items():
            page.fill(f"textarea[name={field}]", text)
        page.get_by_role("button", name="Save card text").click()
        expect(page.get_by_text("Card text saved; the next release uses it.")).to_be_visible()
        for field, text in CARD.items():
            expect(page.locator(f"textarea[name={field}]")).to_have_value(text)

        # 2. It publishes every public dataset (nothing ticked); the row shows the job's progress.
        page.get_by_role("button", name="Publish release").click()
        expect(page.get_by_text("Release queued: it is built in the background.")).to_be_visible()
        release = Release.objects.get(task=dynasent_task)
        row = page.locator(f"#release-{release.pk}")
        expect(row.locator("progress")).to_be_attached()
        expect(row.locator(".release-status")).to_contain_text("Queued")
        assert [job.id for job in default_queue.jobs] == [release.job_id]

        # 3. The job runs; the row htmx polls turns into the published version, linked.
        run_queued_jobs()
        expect(row.get_by_role("link", name="1.0.0")).to_be_visible(timeout=HANG_MS)
        expect(row.locator("progress")).to_have_count(0)
        expect(row.locator(".release-status")).to_have_text("Published")
        release.refresh_from_db()
        assert release.status == "published" and release.version == "1.0.0" and release.example_count == 3600 + 720
        save_screenshot(page, "release-publish")

        # 4. The release page, as the owner: version, files with checksums, the card, the citation.
        row.get_by_role("link", name="1.0.0").click()
        page.wait_for_url("**/tasks/dynasent/releases/1.0.0/")
        _check_release_page(page, release)
        expect(page.get_by_role("heading", name="Hidden sets (owners only)")).to_be_visible()
        expect(page.get_by_role("link", name="data/round1-test.jsonl")).to_be_visible()
        assert errors == []

    with fresh_page(browser, live_server, PHONE) as phone:
        errors = console_errors(phone)
        log_in(phone, client, owner, live_server)
        phone.goto("/tasks/dynasent/console/releases/")
        expect(phone.get_by_role("link", name="1.0.0")).to_be_visible()
        save_screenshot(phone, "release-publish-390x844")
        assert horizontal_overflow(phone) == 0, "the console's Releases tab scrolls sideways at 390 px"
        assert errors == []

    # 5. A researcher, not logged in, finds the release from the task page and downloads its Parquet files.
    with fresh_page(browser, live_server, DESKTOP) as page:
        errors = console_errors(page)
        page.goto("/tasks/dynasent/")
        page.locator("#task-links").get_by_role("link", name="Dataset releases").click()
        page.wait_for_url("**/tasks/dynasent/releases/")
        expect(page.locator("table")).to_contain_text(release.sha256)
        page.get_by_role("link", name="1.0.0").click()
        page.wait_for_url("**/tasks/dynasent/releases/1.0.0/")
        _check_release_page(page, release)
        expect(page.get_by_text("Hidden sets")).to_have_count(0)
        save_screenshot(page, "release-page")
        assert horizontal_overflow(page) == 0, "the release page scrolls sideways at 1280 px"
        parquet = {}
        for link in page.locator("a[href$='.parquet']").all():
            name, href = link.inner_text(), link.get_attribute("href")
            shown = page.locator("tr", has=page.get_by_role("link", name=name, exact=True)).locator("code").inner_text()
            with urllib.request.urlopen(live_server.url + href) as response:
                body = response.read()
            assert hashlib.sha256(body).hexdigest() == shown, f"{name}: the bytes served are not the page's sha256"
            parquet[name] = tmp_path / name.replace("/", "-")
            parquet[name].write_bytes(body)
        assert sorted(parquet) == ["data/round1-dev.parquet", "data/round2-dev.parquet"]
        with pytest.raises(urllib.error.HTTPError) as refused:  # never followed to the log-in page: the file stays unserved
            urllib.request.build_opener(_NoRedirect).open(live_server.url + "/tasks/dynasent/releases/1.0.0/hidden/data/round1-test.jsonl")
        assert refused.value.code == 302 and "/accounts/login/" in refused.value.headers["Location"]
        assert errors == []

    with fresh_page(browser, live_server, PHONE) as phone:
        errors = console_errors(phone)
        phone.goto("/tasks/dynasent/releases/")
        expect(phone.get_by_role("link", name="1.0.0")).to_be_visible()
        assert horizontal_overflow(phone) == 0, "the releases list scrolls sideways at 390 px"
        phone.goto("/tasks/dynasent/releases/1.0.0/")
        expect(phone.get_by_role("heading", name="DynaSent 1.0.0")).to_be_visible()
        save_screenshot(phone, "release-page-390x844")
        assert horizontal_overflow(phone) == 0, "the release page scrolls sideways at 390 px"
        assert errors == []

    # 6. The downloaded Parquet files load with datasets: one dev split, labels as the task's ClassLabel.
    loaded = datasets.load_dataset("parquet", data_files={"dev": [str(p) for p in parquet.values()]},
                                   cache_dir=str(tmp_path / "hf-cache"))
    assert list(loaded) == ["dev"]
    dev = loaded["dev"]
    assert dev.num_rows == 3600 + 720
    assert isinstance(dev.features["label"], datasets.ClassLabel) and dev.features["label"].names == LABELS
    assert sorted(set(dev["round"])) == [1, 2] and set(dev["split"]) == {"dev"}
    row = dev.filter(lambda r: r["uid"] == "r2-0018536")[0]
    assert dev.features["label"].int2str(row["label"]) == "neutral"
    hidden = set(DatasetItem.objects.filter(dataset__task=dynasent_task, dataset__split="test").values_list("uid", flat=True))
    assert len(hidden) == 3600 + 720 and not hidden & set(dev["uid"])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _check_release_page(page, release) -> None:
    """The public page of ``release``: its version, every manifest file linked with its sha256, the
    card rendered from the owner's Markdown, and the BibTeX citation."""
    expect(page.get_by_role("heading", name="DynaSent 1.0.0")).to_be_visible()
    expect(page.locator("p.muted").first).to_contain_text(release.sha256)
    for entry in release.manifest["files"]:
        file_row = page.locator("tr", has=page.get_by_role("link", name=entry["name"], exact=True))
        expect(file_row.locator("code")).to_have_text(entry["sha256"])
    card = page.locator("article.card")
    expect(card.get_by_role("heading", name="Motivation")).to_be_visible()
    expect(card.locator("strong", has_text="fool")).to_be_visible()
    expect(card.locator("em", has_text="Yelp")).to_be_visible()
    expect(card).to_contain_text(CARD["intended_uses"])
    expect(card.get_by_role("heading", name="Limitations")).to_be_visible()
    expect(page.locator("pre code").nth(1)).to_contain_text("@misc{dynabench-dynasent-1-0-0")
