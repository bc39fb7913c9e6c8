"""A release of an image task carries every image its items name once, as ``images/<sha256>.<ext>``
listed with its sha256; the JSONL rows name the image by that path, so it opens beside the files, and
the Parquet files load with ``datasets`` as ``Image`` features that decode to the pictures."""

import hashlib
import json

import datasets

from django.core.files.storage import default_storage

from releases.tests.support import download_folder, released
from tasks.data.images import ingest_images
from tasks.models import ContextImage, Dataset, DatasetItem, Round
from tests.image_support import image_file, shapes_task


def test_each_image_is_in_the_release_once_and_the_rows_name_it(db, owner, private_media, tmp_path):
    task = shapes_task(owner)
    ingest_images(task=task, acting_user=owner, round_number=1,
                  files=[image_file("a.png", shape="circle"), image_file("b.png", shape="square", seed=1)])
    circle, square = ContextImage.objects.filter(task=task).order_by("original_name")
    Round.objects.filter(task=task, number=1).update(status=Round.Status.CLOSED)
    dataset = Dataset.objects.create(task=task, round=Round.objects.get(task=task, number=1), name="r1-dev", split="dev",
                                     access="standard", label_visibility="public")
    for uid, image, label in (("x1", circle, "circle"), ("x2", square, "square"), ("x3", circle, "triangle")):
        DatasetItem.objects.create(dataset=dataset, uid=uid, input={"image": image.sha256}, target={"label": label})

    release = released(task, owner)
    folder = download_folder(release, tmp_path / "release")

    assert release.status == "published", release.failure_reason
    images = [f for f in release.manifest["files"] if f["name"].startswith("images/")]
    assert sorted(f["name"] for f in images) == sorted(f"images/{i.sha256}.{i.ext}" for i in (circle, square))
    for entry in images:
        assert hashlib.sha256((folder / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]
    rows = [json.loads(line) for line in (folder / "data" / "round1-dev.jsonl").read_text().splitlines()]
    assert [r["image"] for r in rows] == [f"images/{circle.sha256}.{circle.ext}", f"images/{square.sha256}.{square.ext}",
                                          f"images/{circle.sha256}.{circle.ext}"]
    assert all((folder / r["image"]).is_file() for r in rows)
    assert default_storage.exists(release.storage_prefix + images[0]["name"])

    loaded = datasets.load_dataset("parquet", data_files={"dev": str(folder / "data" / "round1-dev.parquet")},
                                   cache_dir=str(tmp_path / "hf-cache"))["dev"]
    assert isinstance(loaded.features["image"], datasets.Image)
    assert loaded.features["label"].names == ["circle", "square", "triangle"]
    assert [row["image"].size for row in loaded] == [(64, 64)] * 3
    assert loaded[1]["image"].tobytes() != loaded[0]["image"].tobytes() == loaded[2]["image"].tobytes()
