"""A local diffusers pipeline directory is checked before anything in it is loaded: a pickle file,
Python code, a link, an ``auto_map``, or a component from a library other than diffusers and
transformers (custom code) refuses it, naming what to fix; the tiny safetensors pipeline passes and
generates images."""

import json
import shutil

import pytest

from dynabench.errors import RuleError
from tasks.loop.image_generation import DiffusersGenerator, check_pipeline_directory
from tests.t2i_support import tiny_pipeline_dir  # noqa: F401


@pytest.fixture
def pipeline(tiny_pipeline_dir, tmp_path):
    """A copy of the tiny pipeline to spoil."""
    return shutil.copytree(tiny_pipeline_dir, tmp_path / "pipeline")


def _edit_json(path, **changes):
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("spoil, says", [
    (lambda p: (p / "unet" / "diffusion_pytorch_model.bin").write_bytes(b"pickle"), "is a pickle or code file"),
    (lambda p: (p / "pipeline.py").write_text("import os"), "is a pickle or code file"),
    (lambda p: (p / "vae" / "link.safetensors").symlink_to(p / "vae" / "diffusion_pytorch_model.safetensors"), "is a link"),
    (lambda p: _edit_json(p / "text_encoder" / "config.json", auto_map={"AutoModel": "evil.Model"}), "'auto_map'"),
    (lambda p: _edit_json(p / "model_index.json", unet=["my_package", "EvilUNet"]), "only diffusers and transformers"),
    (lambda p: _edit_json(p / "model_index.json", _class_name="EvilPipeline"), "not a pipeline class of diffusers"),
    (lambda p: (p / "model_index.json").unlink(), "No model_index.json"),
])
def test_a_spoiled_directory_is_refused_before_loading(pipeline, spoil, says):
    spoil(pipeline)
    with pytest.raises(RuleError, match=says) as refused:
        DiffusersGenerator.load(pipeline)
    assert refused.value.code == "generator_bad_pipeline"


def test_the_tiny_safetensors_pipeline_passes_and_generates(pipeline):
    assert check_pipeline_directory(pipeline)["_class_name"] == "StableDiffusionPipeline"
    images = DiffusersGenerator.load(pipeline).generate("a red square", n=1, size=64, steps=1, seed=3)
    assert len(images) == 1 and images[0].startswith(b"\x89PNG")
