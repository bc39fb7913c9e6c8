"""Bad archives are refused before anything is loaded, with a message saying what to fix, and nothing is stored.

What costs nothing to read (the upload's size and format, a zip's central directory) is refused by the
request; what needs decompressing (a tar's members, the model's config and tokenizer) by the unpacking
job, which sets the model ``failed`` with the same reason."""

import io
import stat
import tarfile
import zipfile

import pytest

from dynabench.errors import RuleError
from leaderboard.services import submit_model_archive
from leaderboard.tests.conftest import zip_directory
from tasks.loop import artefacts
from tasks.models import MLModel
from tests.upload_support import unpack_now
from tests.tiny_models import build_tiny_classifier, build_tiny_qa_model


def zip_with(tiny_dir, entries):
    """A valid model zip plus extra raw entries: [(ZipInfo or name, data)]."""
    buffer = io.BytesIO(zip_directory(tiny_dir))
    with zipfile.ZipFile(buffer, "a") as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def symlink_zip(tiny_dir):
    info = zipfile.ZipInfo("model/link-to-passwd")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return zip_with(tiny_dir, [(info, "/etc/passwd")])


def tar_with(tiny_dir, member: tarfile.TarInfo, data: bytes = b""):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(tiny_dir, arcname="model")
        archive.addfile(member, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def tar_member(name, kind, **extra):
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in extra.items():
        setattr(info, key, value)
    return info


CASES = {
    "path traversal": (lambda d: zip_with(d, [("model/../../evil.txt", "x")]), "unsafe_path", "outside the archive"),
    "absolute path": (lambda d: zip_with(d, [("/tmp/evil.txt", "x")]), "unsafe_path", "relative paths"),
    "symlink in zip": (symlink_zip, "link_in_archive", "links are refused"),
    "pickle weights": (lambda d: zip_with(d, [("model/pytorch_model.bin", b"\x80\x04pickle")]), "pickle_weights", "model.safetensors"),
    "python code": (lambda d: zip_with(d, [("model/modeling_evil.py", "import os")]), "pickle_weights", "never run"),
    "not an archive": (lambda d: b"just some text, not an archive", "not_an_archive", "zip or tar"),
    "empty upload": (lambda d: b"", "not_an_archive", "zip or tar"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_it_refuses_a_bad_archive_and_stores_nothing(case, researcher, sentiment_task, tiny_classifier_dir, media_root):
    build, code, phrase = CASES[case]
    with pytest.raises(RuleError) as info:
        submit_model_archive(user=researcher, task=sentiment_task, upload=build(tiny_classifier_dir), name="bad")
    assert info.value.code == code
    assert phrase in info.value.message
    assert MLModel.objects.count() == 0
    assert list((media_root / "models").iterdir()) == []
    assert not (media_root.parent / "evil.txt").exists()


def failed_in_the_job(user, task, upload, media_root) -> MLModel:
    """Submit ``upload``: the request takes it (status ``unpacking``); run its unpacking job to its end and
    return the model, checking the job left nothing behind (no model files, no stored archive)."""
    model = submit_model_archive(user=user, task=task, upload=upload, name="bad")
    assert model.status == "unpacking"
    model = unpack_now(model)
    assert model.status == "failed"
    assert (model.path, model.archive) == ("", "")
    assert list((media_root / "models").iterdir()) == []
    assert not artefacts.storage().listdir("uploads")[1]
    return model


JOB_CASES = {
    "symlink in tar": (lambda d: tar_with(d, tar_member("model/evil", tarfile.SYMTYPE, linkname="/etc/passwd")), "links are refused"),
    "hard link in tar": (lambda d: tar_with(d, tar_member("model/evil", tarfile.LNKTYPE, linkname="model/config.json")), "links"),
    "device in tar": (lambda d: tar_with(d, tar_member("model/dev", tarfile.CHRTYPE, devmajor=1, devminor=3)), "regular files"),
    "pickle in tar": (lambda d: tar_with(d, tar_member("model/pytorch_model.bin", tarfile.REGTYPE, size=7), b"\x80\x04pickl"), "model.safetensors"),
}


@pytest.mark.parametrize("case", list(JOB_CASES))
def test_the_job_refuses_a_bad_tar_and_fails_the_model_with_the_reason(case, researcher, sentiment_task, tiny_classifier_dir, media_root):
    build, phrase = JOB_CASES[case]
    model = failed_in_the_job(researcher, sentiment_task, build(tiny_classifier_dir), media_root)
    assert phrase in model.failure_reason
    assert not (media_root.parent / "evil").exists()


def test_it_refuses_a_model_of_the_wrong_architecture(researcher, sentiment_task, tiny_qa_dir, media_root):
    model = failed_in_the_job(researcher, sentiment_task, zip_directory(tiny_qa_dir), media_root)
    assert "ForSequenceClassification" in model.failure_reason


def test_it_refuses_labels_that_do_not_match_the_task(researcher, sentiment_task, tmp_path, media_root):
    directory = build_tiny_classifier(tmp_path / "wrong-labels", ["happy", "sad", "meh"])
    model = failed_in_the_job(researcher, sentiment_task, zip_directory(directory), media_root)
    assert "happy" in model.failure_reason and "positive" in model.failure_reason


def test_it_refuses_an_archive_over_the_size_cap(researcher, sentiment_task, tiny_sentiment_zip, settings, media_root):
    settings.MODEL_ARCHIVE_MAX_BYTES = 10_000
    with pytest.raises(RuleError) as info:
        submit_model_archive(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="big")
    assert info.value.code == "archive_too_big" and info.value.status_code == 413
    assert "limit" in info.value.message
    assert MLModel.objects.count() == 0 and list((media_root / "models").iterdir()) == []


def test_it_refuses_an_archive_that_unpacks_too_big(researcher, sentiment_task, tiny_classifier_dir, settings, media_root):
    settings.MODEL_ARCHIVE_MAX_UNPACKED_BYTES = 50_000
    bomb = zip_with(tiny_classifier_dir, [(zipfile.ZipInfo("model/zeros.txt"), b"0" * 100_000)])
    with pytest.raises(RuleError) as info:
        submit_model_archive(user=researcher, task=sentiment_task, upload=bomb, name="bomb")
    assert info.value.code == "archive_too_big" and "unpacks" in info.value.message
    assert MLModel.objects.count() == 0


def test_it_refuses_an_archive_without_a_config(researcher, sentiment_task, tmp_path, media_root):
    weights_only = io.BytesIO()
    with zipfile.ZipFile(weights_only, "w") as archive:
        archive.writestr("model/model.safetensors", b"not really")
    model = failed_in_the_job(researcher, sentiment_task, weights_only.getvalue(), media_root)
    assert "config.json" in model.failure_reason
