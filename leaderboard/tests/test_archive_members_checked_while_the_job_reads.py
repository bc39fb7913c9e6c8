"""Issue 28 (uploads): a 4.3 MB tar.gz holding a 4 GiB member cost the web request 9-22 s of CPU,
because listing a tar.gz's members decompresses them. Now the request decompresses nothing: it
stores the archive and answers; the unpacking job reads the archive member by member, refuses an
entry whose declared size takes the archive past ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES`` before reading
a byte of it, and fails the model with that reason."""

import gzip
import io
import tarfile

import pytest

from dynabench.errors import RuleError
from leaderboard import archives
from leaderboard.services import submit_model_archive
from leaderboard.tests.conftest import tar_directory
from tasks.loop import artefacts
from tests.upload_support import unpack_now

GiB = 1024**3


def tar_gz_declaring(tiny_dir, *, size: int) -> bytes:
    """The tiny model as a tar.gz, then a ``model/model-00002.safetensors`` header declaring ``size``
    bytes with none of its data: the stream ends right after the header. Reading the member's data would
    meet the end of the stream (a damaged archive); refusing it by its header never does."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as archive:
        archive.add(tiny_dir, arcname="model")
    body = plain.getvalue().rstrip(b"\0")  # drop the end-of-archive blocks
    body += b"\0" * (-len(body) % tarfile.BLOCKSIZE)
    header = tarfile.TarInfo("model/model-00002.safetensors")
    header.size = size
    return gzip.compress(body + header.tobuf(format=tarfile.PAX_FORMAT))


def test_the_request_takes_the_archive_and_the_job_refuses_the_member_past_the_limit_unread(
    researcher, sentiment_task, tiny_classifier_dir, media_root,
):
    upload = tar_gz_declaring(tiny_classifier_dir, size=4 * GiB + 1)

    model = submit_model_archive(user=researcher, task=sentiment_task, upload=upload, name="declares-4-gib")
    assert model.status == "unpacking"  # nothing was decompressed in the request
    model = unpack_now(model)

    assert model.status == "failed"
    assert "unpacks to more than 4,096 MiB" in model.failure_reason
    assert "model/model-00002.safetensors" in model.failure_reason
    assert "damaged" not in model.failure_reason  # refused by its header: its data was never read
    assert list((media_root / "models").iterdir()) == [] and not artefacts.storage().listdir("uploads")[1]


def test_every_member_counts_toward_the_limit_kept_or_not(researcher, sentiment_task, tiny_classifier_dir, settings, media_root):
    folder_bytes = sum(f.stat().st_size for f in tiny_classifier_dir.rglob("*") if f.is_file())
    settings.MODEL_ARCHIVE_MAX_UNPACKED_BYTES = folder_bytes + 1000
    buffer = io.BytesIO(tar_directory(tiny_classifier_dir))
    plain = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="r:gz") as source, tarfile.open(fileobj=plain, mode="w:gz") as target:
        for member in source.getmembers():
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
        logs = tarfile.TarInfo("model/logs/events.txt")  # dropped, never written, but read past: it counts
        logs.size = 2000
        target.addfile(logs, io.BytesIO(b"x" * 2000))

    model = unpack_now(submit_model_archive(user=researcher, task=sentiment_task, upload=plain.getvalue(), name="with-logs"))

    assert model.status == "failed"
    assert "model/logs/events.txt" in model.failure_reason and "unpacks to more than" in model.failure_reason


def test_the_job_stops_reading_at_the_entrys_declared_size_and_writes_nothing_past_the_limit(tiny_classifier_dir, tmp_path):
    archive = tmp_path / "model.tar"
    archive.write_bytes(tar_directory(tiny_classifier_dir))
    limit = sum(f.stat().st_size for f in tiny_classifier_dir.rglob("*") if f.is_file()) - 1
    destination = tmp_path / "out"
    destination.mkdir()

    with pytest.raises(RuleError) as info:
        archives.unpack_archive(archive, destination, max_bytes=limit)
    refused = info.value
    assert refused.code == "archive_too_big" and refused.status_code == 413
    written = sum(f.stat().st_size for f in destination.rglob("*") if f.is_file())
    assert written <= limit
