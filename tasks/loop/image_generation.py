"""Image generators in the loop of a ``text_to_image`` task (``tasks/kinds/text_to_image.py``).

Two sources, one contract (``generate(model, prompt, config) -> Generated``):

- an **endpoint model** (``tasks/loop/endpoints/``) speaking the OpenAI-compatible images API:
  ``POST <base_url>/v1/images/generations`` with ``{"model", "prompt", "n", "size": "WxH",
  "response_format": "b64_json"}``, answered ``{"data": [{"b64_json": ...}, ...]}``; sent through
  ``post_json`` (allow-list, timeout, retries, breaker, concurrency, key handling);
  the answer is read up to ``settings.DYNABENCH_IMAGE_ENDPOINT_MAX_RESPONSE_BYTES`` (64 MiB);
- a **local ``diffusers`` pipeline directory** (``DiffusersGenerator``): checked first
  (``check_pipeline_directory``: ``model_index.json`` naming a pipeline class of ``diffusers``
  and components of ``diffusers``/``transformers`` only, safetensors weights, no pickle file, no
  Python file, no link, no ``auto_map``), then loaded with ``use_safetensors=True``,
  ``local_files_only=True`` and no custom pipeline code, and cached per process (two at most).

Every image the generator returns is checked by ``tasks.data.images.check_image`` (format allow-list,
byte and pixel limits, decompression-bomb guard, full decode, metadata stripped) **before any is
stored**: one bad image (not an image, too large, truncated) refuses the whole answer with
``RuleError`` ``generator_bad_image`` (502) saying why, and nothing is stored. ``store`` then
stores them (content hash, thumbnail, Django storage) as ``ContextImage`` records of the task.
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from asgiref.sync import sync_to_async
from django.conf import settings

from dynabench.errors import RuleError
from tasks.loop.endpoints.aio import apost_json
from tasks.loop.endpoints.base import EndpointError
from tasks.loop.endpoints.breaker import breaker_open_for
from tasks.loop.endpoints.calls import post_json
from tasks.loop.endpoints.predictor import predictor_for
from tasks.data.images import CheckedImage, ImageRefused, check_image, store_image
from tasks.kinds.text_to_image import generation_params
from tasks.loop.model_checks import loads_model_json

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".py", ".pyc")
COMPONENT_LIBRARIES = ("diffusers", "transformers")
MAX_CACHED = 2


class GeneratorCode:
    """Stable codes of a generator's refusals."""

    BAD_IMAGE = "generator_bad_image"
    BAD_ANSWER = "generator_bad_answer"
    FAILED = "generator_failed"
    BAD_PIPELINE = "generator_bad_pipeline"


@dataclass
class Generated:
    """What a generator returned, checked: ``images`` (``CheckedImage``, in order) and ``generator``
    (``{"model_id", "model", "source", "params", "latency_ms"}``, stored on the example)."""

    images: list[CheckedImage]
    generator: dict


def _refuse_images(model, raw: list[bytes]) -> list[CheckedImage]:
    """Check every returned image; refuse the whole answer at the first bad one."""
    if not raw:
        raise RuleError(GeneratorCode.BAD_ANSWER, f"The image generator '{model.name}' returned no image. Nothing was saved; try again.",
                        status_code=502)
    checked = []
    for n, data in enumerate(raw, start=1):
        try:
            checked.append(check_image(data, name=f"generated image {n}", original_name=""))
        except ImageRefused as refused:
            raise RuleError(
                GeneratorCode.BAD_IMAGE,
                f"The image generator '{model.name}' returned something the platform refuses: {refused} "
                "Nothing was saved; try again, or tell the task owner if it keeps happening.", status_code=502,
            ) from None
    return checked


# --- endpoints: the OpenAI-compatible images API ----------------------------------------------


def _images_request(model, prompt: str, params: dict) -> tuple:
    """``(endpoint, body, byte limit)`` of an images API request for ``prompt``."""
    endpoint = predictor_for(model).endpoint
    body = {"model": endpoint.model_name, "prompt": prompt, "n": params["n"], "size": f"{params['size']}x{params['size']}",
            "response_format": "b64_json"}
    if "seed" in endpoint.params:
        body["seed"] = endpoint.params["seed"]
    limit = int(getattr(settings, "DYNABENCH_IMAGE_ENDPOINT_MAX_RESPONSE_BYTES", 64 * 2**20))
    return endpoint, body, limit


def _failed(model, error: EndpointError) -> RuleError:
    """What the annotator is told when the generator did not answer: misconfigured (502: its owners
    were told, trying again will not help) or failing (503, with when to try again)."""
    if error.config_error:
        return RuleError(error.code, f"The image generator '{model.name}' is misconfigured, so it cannot answer; its owners "
                                     f"were told. {error.message} Nothing was saved.", status_code=502)
    wait = breaker_open_for(model)
    again = f"try again in {wait:.0f} s" if wait > 0 else "try again in a moment"
    return RuleError(error.code, f"The image generator '{model.name}' failed: {error.message} Nothing was saved; "
                                 f"your prompt stays in the form: {again}.", status_code=503)


def _images_answer(model, endpoint, body: dict, params: dict, answer: dict, latency_ms: float) -> tuple[list[bytes], dict]:
    """The images (bytes) of an images API answer and the generator's record; ``RuleError`` (502) for a bad answer."""
    items = answer.get("data")
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("b64_json"), str) for i in items):
        raise RuleError(GeneratorCode.BAD_ANSWER, f"The image generator '{model.name}' did not answer as the images API does "
                                                  "(data[].b64_json). Nothing was saved.", status_code=502)
    raw = []
    for n, item in enumerate(items[: params["n"]], start=1):
        try:
            raw.append(base64.b64decode(item["b64_json"], validate=True))
        except (binascii.Error, ValueError):
            raise RuleError(GeneratorCode.BAD_ANSWER, f"Image {n} of the generator '{model.name}' is not valid base64. "
                                                      "Nothing was saved.", status_code=502) from None
    info = {"model_id": model.pk, "model": endpoint.model_name, "source": "endpoint",
            "params": {k: v for k, v in body.items() if k not in ("prompt", "model")}, "latency_ms": round(latency_ms, 3)}
    return raw, info


def _endpoint_images(model, prompt: str, params: dict) -> tuple[list[bytes], dict]:
    endpoint, body, limit = _images_request(model, prompt, params)
    try:
        answer, latency_ms = post_json(endpoint, "images/generations", body, max_bytes=limit)
    except EndpointError as error:
        raise _failed(model, error) from None
    return _images_answer(model, endpoint, body, params, answer, latency_ms)


# --- local diffusers pipelines ------------------------------------------------------------------


def _refuse_pipeline(message: str):
    raise RuleError(GeneratorCode.BAD_PIPELINE, message, field="model")


def check_pipeline_directory(path) -> dict:
    """Check a diffusers pipeline directory before loading anything from it; return its ``model_index.json``.

    Refuses (``RuleError`` ``generator_bad_pipeline``, naming what to fix): not a directory, no
    ``model_index.json``, a ``_class_name`` that is not a pipeline class of the installed ``diffusers``,
    a component from another library than ``diffusers``/``transformers`` (custom code), any link,
    pickle-based or Python file, an ``auto_map`` in any JSON config, a component folder without
    ``.safetensors`` weights where it has weights at all.
    """
    import diffusers

    path = Path(path)
    if not path.is_dir():
        _refuse_pipeline(f"The generator path '{path}' is not a directory.")
    index_file = path / "model_index.json"
    if not index_file.is_file():
        _refuse_pipeline("No model_index.json in the directory; save the pipeline with save_pretrained().")
    for file in path.rglob("*"):
        if file.is_symlink():
            _refuse_pipeline(f"'{file.relative_to(path)}' is a link; put the file itself in the directory.")
        if file.suffix.lower() in PICKLE_SUFFIXES:
            _refuse_pipeline(f"'{file.relative_to(path)}' is a pickle or code file; save with safe_serialization=True and remove it.")
        if file.suffix == ".json" and file.stat().st_size < 2**20:
            try:
                data = loads_model_json(file.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                _refuse_pipeline(f"'{file.relative_to(path)}' is not valid JSON.")
            if isinstance(data, dict) and "auto_map" in data:
                _refuse_pipeline(f"'{file.relative_to(path)}' has an 'auto_map' entry, which asks for custom code; remove it.")
    try:
        index = loads_model_json(index_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        _refuse_pipeline("model_index.json is not valid JSON within the platform's bounds.")
    if not isinstance(index, dict):
        _refuse_pipeline("model_index.json must hold a JSON object.")
    name = index.get("_class_name")
    if not isinstance(name, str) or not name.endswith("Pipeline") or not hasattr(diffusers, name):
        _refuse_pipeline(f"model_index.json names '{name}', which is not a pipeline class of diffusers {diffusers.__version__}.")
    for component, value in index.items():
        if component.startswith("_") or not isinstance(value, list) or value == [None, None]:
            continue  # settings such as requires_safety_checker; left-out components
        if not (len(value) == 2 and value[0] in COMPONENT_LIBRARIES):
            _refuse_pipeline(f"Component '{component}' of model_index.json comes from {value!r}; only diffusers and "
                             "transformers components load (no custom code).")
        folder = path / component
        weights = [f for f in folder.glob("*") if f.suffix in (".safetensors", ".bin", ".pt", ".ckpt")] if folder.is_dir() else []
        if weights and not any(f.suffix == ".safetensors" for f in weights):
            _refuse_pipeline(f"Component '{component}' has no .safetensors weights.")
    return index


class DiffusersGenerator:
    """A local diffusers text-to-image pipeline (``DiffusionPipeline.from_pretrained``, safetensors
    only, never custom code), on the CPU or the first CUDA device. ``generate(prompt, n=, size=,
    steps=, seed=)`` returns ``n`` PNG images as bytes, ``size`` x ``size`` pixels; one call at a time
    per pipeline (a lock: pipelines keep state between steps)."""

    kind = "diffusers"

    def __init__(self, pipeline, path: Path):
        self.pipeline, self.path = pipeline, path
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path) -> "DiffusersGenerator":
        """Check (``check_pipeline_directory``) and load the pipeline directory ``path``; ``RuleError`` when refused."""
        import torch
        from diffusers import DiffusionPipeline

        check_pipeline_directory(path)
        try:
            pipeline = DiffusionPipeline.from_pretrained(
                str(path), use_safetensors=True, local_files_only=True, dtype=torch.float32,
            )
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, ImportError) as error:
            _refuse_pipeline(f"The pipeline directory could not be loaded: {error}")
        pipeline.set_progress_bar_config(disable=True)
        pipeline.to("cuda" if torch.cuda.is_available() else "cpu")
        return cls(pipeline, Path(path))

    def generate(self, prompt: str, *, n: int, size: int, steps: int, seed: int = 0) -> list[bytes]:
        """``n`` PNG images (bytes) for ``prompt``, deterministic for a seed."""
        import torch

        generator = torch.Generator(device="cpu").manual_seed(int(seed))
        with self._lock, torch.inference_mode():
            result = self.pipeline(prompt, num_images_per_prompt=n, height=size, width=size, num_inference_steps=steps,
                                   generator=generator, output_type="pil")
        out = []
        for image in result.images:
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            out.append(buffer.getvalue())
        return out


_cache: "OrderedDict[tuple, DiffusersGenerator]" = OrderedDict()
_cache_lock = threading.Lock()


def generator_for(model) -> DiffusersGenerator:
    """The process's ``DiffusersGenerator`` of the model record ``model`` (kind ``hf_directory``), loaded once
    (keyed by id, path and checksum; at most ``MAX_CACHED`` kept)."""
    from tasks.loop import artefacts

    path = artefacts.local_path(model)
    key = (model.pk, str(path), model.checksum or "")
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    loaded = DiffusersGenerator.load(path)
    with _cache_lock:
        _cache[key] = loaded
        while len(_cache) > MAX_CACHED:
            _cache.popitem(last=False)
    return loaded


# --- the one entry point --------------------------------------------------------------------------


def generate(model, prompt: str, config: dict, *, seed: int = 0) -> Generated:
    """Ask the generator ``model`` (endpoint or diffusers directory) for the task's images of ``prompt``
    (``text_to_image.generation_params``) and check every one; nothing is stored here. Raises
    ``RuleError``: the endpoint failing (503, with the reason), a bad answer or image (502), a refused
    pipeline directory."""
    params = generation_params(config)
    if model.is_endpoint:
        raw, info = _endpoint_images(model, prompt, params)
    else:
        generator = generator_for(model)
        started = time.perf_counter()
        try:
            raw = generator.generate(prompt, n=params["n"], size=params["size"], steps=params["steps"], seed=seed)
        except (RuntimeError, ValueError) as error:
            raise RuleError(GeneratorCode.FAILED, f"The image generator '{model.name}' failed ({error}). Nothing was saved.",
                            status_code=503) from None
        info = {"model_id": model.pk, "model": model.name, "source": "diffusers",
                "params": {**params, "seed": seed}, "latency_ms": round((time.perf_counter() - started) * 1000, 3)}
    return Generated(images=_refuse_images(model, raw), generator=info)


async def agenerate(model, prompt: str, config: dict, *, seed: int = 0) -> Generated:
    """``generate`` for async views: an endpoint generator is awaited without holding a thread
    (``tasks.loop.endpoints.aio.apost_json``), its images checked on a thread of the default
    executor; a local pipeline computes on such a thread. Same errors as ``generate``."""
    if not model.is_endpoint:
        return await sync_to_async(generate, thread_sensitive=False)(model, prompt, config, seed=seed)
    params = generation_params(config)
    endpoint, body, limit = await sync_to_async(_images_request)(model, prompt, params)
    try:
        answer, latency_ms = await apost_json(endpoint, "images/generations", body, max_bytes=limit)
    except EndpointError as error:
        raise _failed(model, error) from None
    raw, info = _images_answer(model, endpoint, body, params, answer, latency_ms)
    images = await sync_to_async(_refuse_images, thread_sensitive=False)(model, raw)
    return Generated(images=images, generator=info)


def store(task, generated: Generated) -> list[dict]:
    """Store every checked image of ``generated`` for ``task`` (``tasks.data.images.store_image``: content hash,
    thumbnail, storage; the same image twice is one record); return ``[{"sha256", "ext", "width", "height"}]``.
    A generated record's ``created_at`` is set to now each time it is generated again, so the removal of
    unjudged images (``annotation/generated_images.py``) counts its grace period from the last generation."""
    from django.utils import timezone

    from tasks.models import ContextImage

    out = []
    for image in generated.images:
        record = store_image(task, image)
        ContextImage.objects.filter(pk=record.pk, uploaded_by__isnull=True).update(created_at=timezone.now())
        out.append({"sha256": record.sha256, "ext": record.ext, "width": record.width, "height": record.height})
    return out
