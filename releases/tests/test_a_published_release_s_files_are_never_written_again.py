"""A release's files are written once: storing a file under a name a release already holds is
refused and leaves the stored bytes as they were; a release's job run again changes nothing."""

import pytest
from django.core.files.storage import default_storage

from releases.build import build
from releases.files import StoredFileExists, store
from releases.tests.support import released


def test_a_stored_release_file_is_never_overwritten(dynasent_task, owner, tmp_path):
    release = released(dynasent_task, owner)
    name = release.storage_prefix + "README.md"
    with default_storage.open(name, "rb") as handle:
        before = handle.read()
    other = tmp_path / "README.md"
    other.write_text("something else")

    with pytest.raises(StoredFileExists):
        store(other, name)
    again = build(release.pk)

    with default_storage.open(name, "rb") as handle:
        assert handle.read() == before
    assert (again.version, again.sha256, again.status) == (release.version, release.sha256, "published")
