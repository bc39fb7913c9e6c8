"""With the storage set to an S3-compatible bucket (django-storages' ``S3Storage``), a worker on
another machine evaluates a model it has never seen on its own disk: the artefact and the
predictions file travel through the bucket only.

The bucket is served over HTTP by moto's S3-compatible server, in this process; the platform
and the worker are separate processes that reach it through ``STORAGE_BACKEND`` and
``STORAGE_OPTIONS`` exactly as a deployment would (README "Workers on other machines"). The
model is registered from a folder that is deleted before the worker starts working.
"""

import json
import shutil
import socket

import boto3
import pytest
from moto.server import ThreadedMotoServer

from tests.worker_stack import WorkerStack, sentiment_model_setup

pytestmark = pytest.mark.slow

BUCKET = "dynabench-artefacts"

#: The run's outcome, read from the stack's database once it has ended.
RESULT = """
SELECT r.status, r.error, r.n_examples, r.predictions_file FROM leaderboard_evaluationrun r
JOIN tasks_dataset d ON d.id = r.dataset_id WHERE d.name = 'sentiment-r1-dev' AND r.status IN ('done', 'failed')
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bucket():
    """An empty bucket on an S3-compatible server at http://127.0.0.1:<port>; yields its boto3 client."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                          aws_access_key_id="dynabench", aws_secret_access_key="secret")
    client.create_bucket(Bucket=BUCKET)
    try:
        yield client
    finally:
        server.stop()


def test_a_worker_evaluates_a_model_it_only_has_through_the_bucket(tmp_path, bucket, tiny_classifier_dir, stack_template):
    options = {"bucket_name": BUCKET, "endpoint_url": bucket.meta.endpoint_url, "access_key": "dynabench",
               "secret_key": "secret", "region_name": "us-east-1", "file_overwrite": True}
    stack = WorkerStack(tmp_path / "stack", stack_template, LEADERBOARD_BOOTSTRAP_RESAMPLES="200",
                        STORAGE_BACKEND="storages.backends.s3.S3Storage", STORAGE_OPTIONS=json.dumps(options))
    local = shutil.copytree(tiny_classifier_dir, tmp_path / "stack" / "models" / "sentiment" / "tiny-bert")
    cache = tmp_path / "worker-cache"
    try:
        # The worker does its imports while the platform is set up, and works only once the local copy is gone.
        stack.worker("remote", cache=cache, standby=True)
        created = stack.json(sentiment_model_setup(12, local) + 'print(json.dumps({"checksum": model.checksum}))')
        # The worker's machine has no copy of the model: only the bucket does.
        shutil.rmtree(tmp_path / "stack" / "models")
        stack.release("remote")
        status, error, n_examples, predictions_file = stack.wait_for(lambda: stack.query(RESULT), timeout=900, what="the run to finish")[0]
        result = {"status": status, "error": error, "n_examples": n_examples, "predictions_file": predictions_file}
    finally:
        stack.stop()

    assert result["status"] == "done", result["error"]
    assert result["n_examples"] == 12
    keys = {o["Key"] for o in bucket.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert f"artefacts/{created['checksum']}/MANIFEST.json" in keys
    assert result["predictions_file"] in keys
    # The worker filled its own cache from the bucket, and nothing went to the local media folder.
    assert (cache / created["checksum"] / "MANIFEST.json").is_file()
    assert not (tmp_path / "stack" / "media" / "artefacts").exists()
