"""Finding 6: disk could be filled cheaply. A 13 MB zip holding a 2 GiB unused file and a tiny valid model
was unpacked whole and kept (4 GiB per model, 5 models a day). Now only the files the model uses are
unpacked (by the upload's job), and the unpacked bytes count against a per-user storage quota.

On the old code the first test kept the 2 GiB file under MEDIA_ROOT and the second accepted every
model regardless of what its owner already kept."""

import zipfile
from pathlib import Path

import pytest

from dynabench.errors import RuleError
from leaderboard.services import storage_used_bytes, submit_model_archive
from leaderboard.tests.conftest import zip_directory
from tasks.models import MLModel
from tests.upload_support import submit_unpacked, unpack_now

GiB = 1024**3
CHUNK = 16 * 1024 * 1024


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


def bomb_with_a_model(path: Path, model_dir: Path) -> Path:
    """A zip of the tiny model plus ``model/logs/events.jsonl``: 2 GiB of zeros, deflated to a few MB."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for file in sorted(model_dir.rglob("*")):
            if file.is_file():
                archive.write(file, "model/" + str(file.relative_to(model_dir)))
        zeros = bytes(CHUNK)
        with archive.open("model/logs/events.jsonl", "w", force_zip64=True) as member:
            for _ in range(2 * GiB // CHUNK):
                member.write(zeros)
    return path


@pytest.mark.slow
def test_a_small_zip_with_a_huge_unused_file_keeps_only_the_model(researcher, sentiment_task, tiny_classifier_dir, tmp_path, media_root):
    archive = bomb_with_a_model(tmp_path / "bomb.zip", tiny_classifier_dir)
    assert archive.stat().st_size < 20 * 1024 * 1024

    with open(archive, "rb") as upload:
        model = submit_model_archive(user=researcher, task=sentiment_task, upload=upload, name="tiny-with-logs")
    model = unpack_now(model)

    folder = Path(model.path)
    assert (folder / "model.safetensors").is_file() and not (folder / "logs").exists()
    kept = sum(f.stat().st_size for f in media_root.rglob("*") if f.is_file())
    assert kept < 5 * 1024 * 1024  # the model (twice: its folder and its copy in the storage), not 2 GiB
    assert storage_used_bytes(researcher) == sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_the_unpacked_bytes_count_against_the_owners_quota(researcher, sentiment_task, tiny_classifier_dir, settings, media_root):
    model_bytes = sum(f.stat().st_size for f in tiny_classifier_dir.rglob("*") if f.is_file())
    settings.MODEL_STORAGE_QUOTA_BYTES = int(model_bytes * 1.5)
    archive = zip_directory(tiny_classifier_dir)
    first = submit_unpacked(user=researcher, task=sentiment_task, upload=archive, name="first")
    assert storage_used_bytes(researcher) == model_bytes

    with pytest.raises(RuleError) as refused:
        submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="second")
    assert refused.value.code == "storage_quota" and refused.value.status_code == 413
    assert "quota" in refused.value.message and "MiB" in refused.value.message
    assert list(MLModel.objects.filter(owner=researcher).values_list("pk", flat=True)) == [first.pk]
    assert sorted(p.name for p in (media_root / "models").iterdir()) == [str(first.pk)]
