"""A CSV or JSONL whose column names images already uploaded to the task (by their path in the
zip, their file name or their sha256) imports through the console's column mapping: the items'
image field holds the sha256; a path that names no image is refused with its line, nothing imported."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.data.images import ingest_images
from tasks.models import ContextImage, Dataset, DatasetItem
from tasks.data.uploads import start_import, store_upload
from tests.image_support import draw, encode, shapes_task, zip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _upload(task, owner, content: bytes, name: str):
    upload = store_upload(task=task, acting_user=owner, file=SimpleUploadedFile(name, content), target="dataset",
                          options={"name": "shapes-test", "split": "test"})
    return start_import(upload=upload, acting_user=owner, mapping={"fields": {"image": "path", "label": "label"}, "uid": "id", "tag": ""})


def test_a_file_of_image_paths_imports_with_the_column_mapping(owner):
    task = shapes_task(owner)
    ingest_images(task=task, acting_user=owner, round_number=1, files=[zip_file({
        "photos/a.png": encode(draw("circle")), "photos/b.png": encode(draw("square", seed=1)),
        "other/c.png": encode(draw("triangle", seed=2)),
    })])
    c_sha = ContextImage.objects.get(original_name="other/c.png").sha256
    csv = f"id,path,label\n1,photos/a.png,circle\n2,b.png,square\n3,{c_sha},triangle\n".encode()
    upload = _upload(task, owner, csv, "labels.csv")
    assert upload.status == "done", upload.errors
    items = {i.uid: i for i in DatasetItem.objects.filter(dataset__task=task)}
    assert items["1"].input["image"] == ContextImage.objects.get(original_name="photos/a.png").sha256
    assert items["2"].input["image"] == ContextImage.objects.get(original_name="photos/b.png").sha256
    assert items["3"].input == {"image": c_sha} and items["3"].target == {"label": "triangle"}


def test_a_path_that_names_no_image_is_refused_with_its_line(owner):
    task = shapes_task(owner)
    ingest_images(task=task, acting_user=owner, round_number=1, files=[zip_file({"photos/a.png": encode(draw())})])
    upload = _upload(task, owner, b'{"id": 1, "path": "photos/a.png", "label": "circle"}\n{"id": 2, "path": "photos/zz.png", "label": "square"}\n', "labels.jsonl")
    assert upload.status == "failed"
    assert upload.errors[0]["line"] == 2 and "'photos/zz.png' (for image) names no image of task shapes" in upload.errors[0]["message"]
    assert not DatasetItem.objects.exists() and not Dataset.objects.filter(items__isnull=False).exists()
