"""A real text-to-image generator for tests and benchmarks: a tiny diffusers pipeline with random
weights (``build_tiny_diffusion_pipeline``), and a real server answering the OpenAI-compatible
images API (``POST /v1/images/generations``, ``response_format=b64_json``) with it on a local port
(``start_image_server``; port 0 binds a free one).

The pipeline is a ``StableDiffusionPipeline`` built here, nothing downloaded: a 2-block
``UNet2DConditionModel`` (32/64 channels), a 2-block ``AutoencoderKL`` (4 latent channels), a
2-layer ``CLIPTextModel`` (hidden size 32) with a ``CLIPTokenizer`` made from a byte-level BPE
vocabulary of lowercase letters and digits written in the folder, a ``DDIMScheduler``; saved with
``save_pretrained(..., safe_serialization=True)`` (safetensors only). Its 64 x 64 images are
noise, deterministic for a seed.

Tests drive the server's failures through its attributes: ``mode`` ``"ok"`` (images from the
pipeline), ``"garbage"`` (base64 of bytes that are no image), ``"huge"`` (a PNG whose header claims
20,000 x 20,000 pixels), ``"not_api"`` (a JSON answer without ``data``); ``stop()`` closes the port
(an endpoint that is down). ``requests`` records every body received.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import threading
import zlib
from http.server import ThreadingHTTPServer
from pathlib import Path

from tests.endpoint_server import QuietHandler


def build_tiny_diffusion_pipeline(path: Path, *, seed: int = 0) -> Path:
    """Save a tiny random-weight Stable Diffusion pipeline (see the module docstring) under ``path``; return it."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    path = Path(path)
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=8, in_channels=4, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, norm_num_groups=32, attention_head_dim=4,
    )
    vae = AutoencoderKL(
        block_out_channels=(32, 64), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=32,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"), up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
    )
    text = CLIPTextModel(CLIPTextConfig(
        bos_token_id=0, eos_token_id=2, pad_token_id=1, hidden_size=32, intermediate_size=37, layer_norm_eps=1e-5,
        num_attention_heads=4, num_hidden_layers=2, vocab_size=1000, max_position_embeddings=77,
    ))
    vocab_dir = path / "_vocab"
    vocab_dir.mkdir(parents=True, exist_ok=True)
    symbols = list("abcdefghijklmnopqrstuvwxyz0123456789")
    vocab = {"<|startoftext|>": 0, "<|padding|>": 1, "<|endoftext|>": 2}
    for symbol in symbols + [s + "</w>" for s in symbols]:
        vocab[symbol] = len(vocab)
    (vocab_dir / "vocab.json").write_text(json.dumps(vocab))
    (vocab_dir / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = CLIPTokenizer(str(vocab_dir / "vocab.json"), str(vocab_dir / "merges.txt"), model_max_length=77,
                              pad_token="<|endoftext|>")
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1)
    pipeline = StableDiffusionPipeline(unet=unet, vae=vae, text_encoder=text, tokenizer=tokenizer, scheduler=scheduler,
                                       safety_checker=None, feature_extractor=None, requires_safety_checker=False)
    pipeline.save_pretrained(path, safe_serialization=True)
    for file in vocab_dir.iterdir():
        file.unlink()
    vocab_dir.rmdir()
    return path


def huge_png_header(width: int = 20000, height: int = 20000) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels (one tiny compressed row follows): refused
    from its header, before anything is decoded."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * (width + 1))) + chunk(b"IEND", b"")


class _Handler(QuietHandler):
    server: "ImageServer"

    def do_POST(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with server.lock:
            server.requests.append({"path": self.path, "body": body})
        if self.path != "/v1/images/generations":
            return self._send(404, {"error": {"message": "not found"}})
        server.gate.wait(120)  # held by ``hold()`` until ``release()``: a generator still at work
        n = max(1, min(int(body.get("n") or 1), 4))
        if server.mode == "not_api":
            return self._send(200, {"created": 0, "images": []})
        if server.mode == "garbage":
            blobs = [b"this is not an image at all, just text" for _ in range(n)]
        elif server.mode == "huge":
            blobs = [huge_png_header() for _ in range(n)]
        else:
            side = int(str(body.get("size") or "64x64").split("x")[0])
            blobs = server.generate(body.get("prompt", ""), n=n, size=side, seed=int(body.get("seed") or 0))
        self._send(200, {"created": 0, "data": [{"b64_json": base64.b64encode(b).decode()} for b in blobs]})


class ImageServer(ThreadingHTTPServer):
    """The images API server (see the module docstring); ``url`` is its base URL."""

    daemon_threads = True

    def __init__(self, pipeline_dir: Path, port: int = 0):
        import torch
        from diffusers import DiffusionPipeline

        super().__init__(("127.0.0.1", port), _Handler)
        self.pipeline = DiffusionPipeline.from_pretrained(str(pipeline_dir), use_safetensors=True, local_files_only=True,
                                                          dtype=torch.float32)
        self.pipeline.set_progress_bar_config(disable=True)
        self.torch = torch
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests, self.mode = [], "ok"
        self.gate = getattr(self, "gate", None) or threading.Event()
        self.gate.set()

    def hold(self):
        """Answer no generation request until ``release()`` (at most two minutes): a slow generator."""
        self.gate.clear()

    def release(self):
        self.gate.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def generate(self, prompt: str, *, n: int, size: int, seed: int) -> list[bytes]:
        """``n`` PNG images of ``size`` x ``size`` from the pipeline (2 denoising steps)."""
        generator = self.torch.Generator().manual_seed(seed)
        with self.lock, self.torch.inference_mode():
            images = self.pipeline(prompt, num_images_per_prompt=n, height=size, width=size, num_inference_steps=2,
                                   generator=generator).images
        out = []
        for image in images:
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            out.append(buffer.getvalue())
        return out

    def stop(self):
        self.shutdown()
        self.server_close()


def start_image_server(pipeline_dir: Path, *, port: int = 0) -> ImageServer:
    """Start an ``ImageServer`` in a daemon thread; return it (``stop()`` ends it)."""
    server = ImageServer(pipeline_dir, port=port)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
