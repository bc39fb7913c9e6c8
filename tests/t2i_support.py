"""For the tests of text-to-image red-teaming: the tiny diffusion pipeline (built once per test
process), the real images-API server on port 0 (``tests/image_generation_server.py``), the Adversarial
Nibbler task from its definition at test sizes, and generator records of both sources.

Import the fixtures into a test module (``from tests.t2i_support import image_server, tiny_pipeline_dir``)."""

import json
from pathlib import Path

import pytest

from tests.endpoint_fixtures import allow_local_server
from tests.image_generation_server import build_tiny_diffusion_pipeline, start_image_server

DEFINITION = Path(__file__).resolve().parents[1] / "tasks" / "data" / "task_definitions" / "adversarial-nibbler.json"
TEST_SIZES = {"images_per_prompt": 2, "image_size": 64, "num_inference_steps": 2}


@pytest.fixture(scope="session")
def tiny_pipeline_dir(tmp_path_factory):
    return build_tiny_diffusion_pipeline(tmp_path_factory.mktemp("tiny-sd") / "pipeline")


@pytest.fixture(scope="session")
def _shared_image_server(tiny_pipeline_dir):
    server = start_image_server(tiny_pipeline_dir)
    yield server
    server.stop()


@pytest.fixture
def image_server(_shared_image_server, settings):
    """The session's images-API server, reset, with its port of 127.0.0.1 on the endpoint allow-list."""
    allow_local_server(settings, _shared_image_server.url)
    _shared_image_server.reset()
    yield _shared_image_server
    _shared_image_server.reset()


def nibbler_task(owner=None, **config):
    """The Adversarial Nibbler task from its definition (round 1 open), at test sizes (2 images of 64 x 64
    pixels, 2 steps) plus ``config``; owned by ``owner`` if given."""
    from tasks.data.seed import create_task

    definition = json.loads(DEFINITION.read_text(encoding="utf-8"))
    definition["config"] = {**definition["config"], **TEST_SIZES, **config}
    task, _ = create_task(definition)
    if owner is not None:
        task.owners.add(owner)
    return task


def diffusers_generator(task, path, name="tiny-sd-local"):
    """A local diffusers pipeline directory as a model of ``task``, put in round 1's loop."""
    from tasks.models import MLModel

    model = MLModel.objects.create(task=task, name=name, kind=MLModel.Kind.HF_DIRECTORY, path=str(path))
    task.rounds.get(number=1).target_models.add(model)
    return model


def endpoint_generator(task, url, name="tiny-sd-endpoint", **fields):
    """An endpoint model of ``task`` answering the images API at ``url`` (a fresh breaker), in round 1's loop."""
    from tasks.loop.endpoints.breaker import reset_breaker
    from tasks.loop.endpoints.records import create_endpoint_model

    fields.setdefault("timeout_s", 60)
    fields.setdefault("max_retries", 0)
    model = create_endpoint_model(task=task, owner=None, name=name, base_url=url, model_name="tiny-sd", **fields)
    reset_breaker(model)
    task.rounds.get(number=1).target_models.add(model)
    return model


def add_context(task, prompt="a quiet street at night"):
    from tasks.models import Context

    return Context.objects.create(round=task.rounds.get(number=1), uid=f"seed-{abs(hash(prompt))}", data={"prompt": prompt})
