"""``DynabenchClient.download_release`` and ``dynabench release download`` fetch every file of a
release over HTTP, resume an interrupted file with a ``Range`` request, refuse a file whose sha256
differs from the manifest's, and the folder loads in one line with ``datasets.load_dataset``."""

import datasets
import pytest

from dynabench_client import DynabenchClient
from dynabench_client.releases import ChecksumMismatch
from releases.tests.support import released
from tests.cli_support import dynabench


def test_it_downloads_resumes_and_loads_in_one_line(live_server, dynasent_task, owner, tmp_path, monkeypatch):
    release = released(dynasent_task, owner)
    client = DynabenchClient(base_url=live_server.url)
    folder = client.download_release("dynasent", "1.0.0", tmp_path / "dl")
    parquet = folder / "data" / "round1-dev.parquet"
    whole = parquet.read_bytes()
    parquet.unlink()
    (folder / "data" / "round1-dev.parquet.part").write_bytes(whole[:5000])
    asked = []
    original = client.session.get
    monkeypatch.setattr(client.session, "get", lambda url, **kw: asked.append(kw.get("headers")) or original(url, **kw))

    client.download_release("dynasent", "1.0.0", folder)

    assert parquet.read_bytes() == whole
    assert asked == [{"Range": "bytes=5000-"}]  # only the interrupted file, from where it stopped
    assert {f["name"] for f in release.manifest["files"]} <= {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    assert loaded["dev"].num_rows == 4320 and loaded["dev"].features["label"].names == ["positive", "negative", "neutral"]


def test_a_corrupted_file_is_refused(live_server, dynasent_task, owner, tmp_path):
    released(dynasent_task, owner)
    client = DynabenchClient(base_url=live_server.url)
    folder = tmp_path / "dl"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "round1-dev.jsonl.part").write_bytes(b"not the file")  # a bad prefix: resuming cannot fix it

    with pytest.raises(ChecksumMismatch, match="round1-dev.jsonl"):
        client.download_release("dynasent", "1.0.0", folder)
    assert not (folder / "data" / "round1-dev.jsonl.part").exists()


def test_the_command_line_downloads_it(live_server, dynasent_task, owner, tmp_path):
    released(dynasent_task, owner)

    ran = dynabench("release", "download", "dynasent", "1.0.0", "--to", tmp_path / "cli", url=live_server.url, config=tmp_path / "login")

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(tmp_path / "cli")
    assert (tmp_path / "cli" / "data" / "round2-dev.parquet").is_file() and (tmp_path / "cli" / "README.md").is_file()
