"""Submitting a model archive: a zip or tar.gz of a Hugging Face directory is checked and stored by the
request, then unpacked by its job under MEDIA_ROOT/models/<id>/ and queued for evaluation."""

from pathlib import Path

from leaderboard.services import submit_model_archive
from leaderboard.tests.conftest import tar_directory, zip_directory
from tasks.loop import artefacts
from tasks.loop.model_checks import directory_checksum
from tasks.models import MLModel
from tests.upload_support import submit_unpacked, unpack_now


def test_the_request_stores_the_archive_and_its_job_unpacks_and_queues_the_model(
    researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip, media_root, tiny_classifier_dir,
    django_capture_on_commit_callbacks,
):
    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        model = submit_model_archive(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name=" tiny-bert ",
                                     description="card")
    # then
    model.refresh_from_db()
    assert (model.kind, model.status, model.name, model.owner, model.path) == ("hf_directory", "unpacking", "tiny-bert", researcher, "")
    assert len(callbacks) == 1  # its unpacking job is enqueued once the transaction commits
    assert artefacts.storage().exists(model.archive) and model.archive.startswith("uploads/")
    assert not (media_root / "models" / str(model.pk)).exists()

    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        model = unpack_now(model)
    # then
    assert model.status == "queued"
    assert Path(model.path) == media_root / "models" / str(model.pk)
    assert (Path(model.path) / "config.json").is_file() and (Path(model.path) / "model.safetensors").is_file()
    assert model.checksum == directory_checksum(tiny_classifier_dir)
    assert artefacts.is_published(model.checksum)
    assert len(callbacks) == 2  # its evaluation run and the leaderboard are enqueued once the job's transaction commits
    assert list(model.evaluation_runs.values_list("status", "dataset__name")) == [("queued", "sentiment-r1-dev")]
    assert not any(p.name.startswith(".") for p in (media_root / "models").iterdir())  # no staging left
    assert model.archive == "" and not artefacts.storage().listdir("uploads")[1]  # the stored archive is deleted


def test_it_accepts_a_tar_gz(researcher, sentiment_task, sentiment_dataset, tiny_classifier_dir):
    model = submit_unpacked(user=researcher, task=sentiment_task, upload=tar_directory(tiny_classifier_dir), name="tarred")
    assert MLModel.objects.get(pk=model.pk).status == "queued"
    assert (Path(model.path) / "tokenizer.json").is_file()


def test_it_accepts_files_at_the_top_of_the_archive(researcher, sentiment_task, tiny_classifier_dir):
    model = submit_unpacked(user=researcher, task=sentiment_task, upload=zip_directory(tiny_classifier_dir, prefix=""), name="flat")
    assert (Path(model.path) / "config.json").is_file()


def test_running_the_job_again_changes_nothing(researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip):
    model = submit_unpacked(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="twice")
    before = (model.path, model.checksum, model.status, model.evaluation_runs.count())

    model = unpack_now(model)

    assert (model.path, model.checksum, model.status, model.evaluation_runs.count()) == before
