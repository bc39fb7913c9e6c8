"""Building a release: the job's steps, in order. Every file goes through Django's default storage
under the release's own prefix and is written once; a failed build removes what it stored and
records the reason."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from releases import files as release_files
from releases.calculations import changes_between, content_digest, first_changelog, next_version
from releases.card import render_card
from releases.citation import bibtex, citation_cff
from releases.croissant import release_croissant
from releases.media import release_media
from releases.models import Release
from releases.selectors import groups_of, item_count, latest_published, release_datasets
from releases.stats import release_stats


def build(release_id: int) -> Release:
    """Build release ``release_id`` and return it, published or failed:

    1. claim it (``queued`` → ``building``, one conditional update: two workers never build it twice);
    2. take the datasets (public ones for the release, hidden ones for the owner-only artefact);
    3. write one JSONL and one Parquet file per round and split (``releases.files``), indexing each
       example's target; progress on the row after each batch;
    4. compare with the previous published release: changelog and version (the first: 1.0.0; nothing changed: failed);
    5. write the card (README.md), Croissant, CITATION.cff and BibTeX;
    6. write the hidden sets, labels included, under the owner-only prefix;
    7. store everything, the media files the items name once each, and publish.
    """
    if Release.objects.filter(pk=release_id, status=Release.Status.QUEUED).update(status=Release.Status.BUILDING) != 1:
        return Release.objects.get(pk=release_id)
    release = Release.objects.select_related("task").get(pk=release_id)
    stored: list[str] = []
    try:
        with release_files.scratch() as folder:
            _build(release, Path(folder), stored)
    except Exception as exc:  # the job records why; nothing half-written stays in storage
        for name in stored:
            default_storage.delete(name)
        Release.objects.filter(pk=release.pk).update(status=Release.Status.FAILED, failure_reason=str(exc)[:2000] or type(exc).__name__,
                                                     version="")
        release.refresh_from_db()
    return release


def _build(release: Release, folder: Path, stored: list[str]) -> None:
    task = release.task
    public, hidden = release_datasets(task, release.dataset_ids)
    if not public:
        raise ValueError("there is no public dataset of a closed round to release")
    columns = task.spec.release_columns(task.config)
    total = max(item_count(public) + item_count(hidden), 1)
    done = 0

    def on_rows(n: int) -> None:
        nonlocal done
        done += n
        Release.objects.filter(pk=release.pk).update(progress=min(done / total, 0.99))

    previous = latest_published(task)
    index: dict | None = {} if previous else None  # a first release needs no comparison
    data = []
    media = release_media(task, public, columns)
    for group in groups_of(public):
        data += release_files.write_group(group, columns, directory=folder / "public", index=index, on_rows=on_rows, media=media)

    if previous is None:
        version = "1.0.0"
        changelog = first_changelog(examples=sum(e["rows"] for e in data if e["format"] == "jsonl"),
                                    rounds=[e["round"] for e in data])
    else:
        changes = changes_between(_index_of(previous, columns), index)
        text_changed = previous.card_text != release.card_text or previous.license != release.license
        try:
            version = next_version(previous.version, changes, text_changed=text_changed)
        except ValueError:
            raise ValueError(f"Nothing changed since {previous.version}: no new release is needed.") from None
        changelog = changes.as_changelog(previous.version)
    release.version = version
    sha256 = content_digest(data)
    published = timezone.now()
    url = settings.SITE_URL + reverse("releases:release", args=[task.code, version])  # absolute: it is cited
    split_rows: dict[str, int] = {}
    for entry in data:
        if entry["format"] == "jsonl":
            split_rows[entry["split"]] = split_rows.get(entry["split"], 0) + entry["rows"]
    examples = sum(split_rows.values())
    stats = release_stats(task, sorted({e["round"] for e in data}), split_rows)
    cite = bibtex(task=task, version=version, url=url, sha256=sha256, year=published.year)
    docs = {
        "README.md": render_card(task=task, version=version, license=release.license, files=data, example_count=examples,
                                 stats=stats, text=release.card_text, changelog=changelog, citation=cite,
                                 published=published.date().isoformat()),
        "croissant.json": json.dumps(release_croissant(task=task, version=version, license=release.license, files=data,
                                                       columns=columns, stats=stats, text=release.card_text, url=url,
                                                       citation=cite, published=published.date().isoformat()), indent=2),
        "CITATION.cff": citation_cff(task=task, version=version, url=url, sha256=sha256, date=published.date().isoformat(),
                                     license=release.license),
        "CITATION.bib": cite,
    }
    for name, text in docs.items():
        path = folder / "public" / name
        path.write_text(text, encoding="utf-8")
        size, digest = release_files.file_digest(path)
        data.append({"name": name, "path": str(path), "format": name.rsplit(".", 1)[-1], "rows": None,
                     "round": None, "split": None, "size": size, "sha256": digest})

    hidden_files = []
    for group in groups_of(hidden):
        hidden_files += [e for e in release_files.write_group(group, columns, directory=folder / "hidden", index=None, on_rows=on_rows)
                         if e["format"] == "jsonl"]

    for entry in data:
        stored.append(release_files.store(entry.pop("path"), release.storage_prefix + entry["name"]))
    for source, path, ext in media.files:  # each once, straight from storage to storage
        with default_storage.open(source, "rb") as handle:
            size, digest = release_files.stream_digest(handle)
        stored.append(release_files.copy_stored(source, release.storage_prefix + path))
        data.append({"name": path, "format": ext, "rows": None, "round": None, "split": None, "size": size, "sha256": digest})
    for entry in hidden_files:
        stored.append(release_files.store(entry.pop("path"), release.hidden_prefix + entry["name"]))
    manifest = {"task": task.code, "version": version, "sha256": sha256, "files": data}
    Release.objects.filter(pk=release.pk).update(
        status=Release.Status.PUBLISHED, version=version, progress=1.0, sha256=sha256, example_count=examples,
        size=sum(e["size"] for e in data), manifest=manifest, hidden_manifest={"files": hidden_files},
        changelog=changelog, stats=stats, published_at=published,
    )
    release.refresh_from_db()


def _index_of(release: Release, columns: list[dict]) -> dict:
    """``{(round, split, uid): target values}`` of a published release, read from its JSONL files in storage."""
    targets = [c["name"] for c in columns if c["source"] == "target"]
    index = {}
    for entry in release.manifest.get("files", []):
        if entry["format"] != "jsonl":
            continue
        with default_storage.open(release.storage_prefix + entry["name"], "rb") as handle:
            for line in handle:
                row = json.loads(line)
                index[(row["round"], row["split"], row["uid"])] = tuple(row.get(name) for name in targets)
    return index
