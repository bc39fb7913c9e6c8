"""Benchmark of images (issue 32): upload + thumbnail per worker, and the registry's image
classification against a bare batched forward of the same model on the same images.

Run: /work/main/.venv/bin/python benchmarks/vision.py [--database-url URL] [--images N] [--quick] [--skip-vqa]

It prepares its own state: a temporary ``DYNABENCH_VAR_DIR`` (media under it), the database given
by ``--database-url`` (default PostgreSQL ``images_test``; it is **flushed**), the ``shapes``
image classification task (``tasks/data/task_definitions/shapes-images.json``) and its owner.

1. Upload + thumbnail, one worker (this process, one thread): ``--images`` photo-sized images
   (640 x 480 JPEG, drawn with Pillow: gradients, shapes and noise, so they compress like photos)
   packed as zips of 50, each zip through ``tasks.data.images.ingest_images`` (checks, verify, full
   decode, re-encode without metadata, thumbnail, storage, records, contexts). Reports images/s
   (goal >= 50/s per worker), and the same for single-image uploads.
2. Registry vs bare: a ViT with random weights (224 px, patch 16, 192 wide, 6 layers: ViT-Tiny's
   shape) saved with its image processor. On the stored images (their sha256s), the registry
   ``load_predictor(...).predict([{"image": sha}], batch_size=B)`` vs the bare loop over the same
   model object: open each stored file with Pillow, ``processor(images=batch)``, ``model(pixel_values)``
   under ``torch.inference_mode`` in batches of B, on ``--threads`` torch threads (default 1, as a
   web worker). Each batch runs through all three in turn (the order alternating), so load on a
   shared machine falls on both alike; medians over repeats; the ratio is
   registry images/s divided by bare images/s (goal >= 0.9x). A second bare figure on images already
   decoded in memory shows the forward alone.
3. Visual question answering, registry vs bare: a ViLT with random weights (224 px, patch 32, 192
   wide, 6 layers, 40 text tokens) and its processor, for the ``colours-vqa`` task; the same stored
   images, each with a question. The registry ``predict([{"image": sha, "question": q}], batch_size=B)``
   vs the bare loop: open each file, ``processor(images=batch, text=questions, padding=True)``,
   ``model(**batch).logits.argmax(-1)``; interleaved and reported as in 2 (``--skip-vqa`` leaves it out).
"""

import argparse
import io
import os
import secrets
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def photo(seed: int, size=(640, 480)):
    """A photo-like RGB image: a gradient, a few shapes and noise (so JPEG works as on photos)."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    w, h = size
    x = np.linspace(0, 1, w)[None, :, None]
    y = np.linspace(0, 1, h)[:, None, None]
    base = (rng.random(3) * 255 * (0.5 * x + 0.5 * y) + rng.normal(0, 12, (h, w, 3))).clip(0, 255).astype("uint8")
    image = Image.fromarray(base, "RGB")
    pen = ImageDraw.Draw(image)
    for _ in range(6):
        x0, y0 = int(rng.integers(0, w - 60)), int(rng.integers(0, h - 60))
        pen.ellipse((x0, y0, x0 + int(rng.integers(30, 200)), y0 + int(rng.integers(30, 200))), fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
    return image


def jpeg(image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=88)
    return out.getvalue()


def setup(args, var_dir: Path):
    from benchmarks._postgres import create_database

    create_database(args.database_url)
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DATABASE_URL": args.database_url, "REDIS_URL": args.redis_url,
        "DYNABENCH_VAR_DIR": str(var_dir), "MEDIA_ROOT": str(var_dir / "media"), "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0", "LOG_LEVEL": "WARNING", "CACHE_KEY_PREFIX": f"bench-vision-{secrets.token_hex(4)}",
    })
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    from tests.image_support import shapes_task

    owner = User.objects.create_user("bench-owner")
    return shapes_task(owner), owner


def bench_upload(task, owner, n: int) -> tuple[float, float]:
    """Return (images/s through zips of 50, images/s as single-image uploads)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tasks.data.images import ingest_images

    print(f"1. upload + thumbnail, one worker: {n} photo-like 640x480 JPEGs ...", flush=True)
    data = [jpeg(photo(seed)) for seed in range(n)]
    zips = []
    for start in range(0, n, 50):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
            for i, content in enumerate(data[start:start + 50]):
                archive.writestr(f"photos/{start + i:05d}.jpg", content)
        zips.append(out.getvalue())
    started = time.perf_counter()
    added = 0
    for k, content in enumerate(zips):
        added += ingest_images(task=task, acting_user=owner, files=[SimpleUploadedFile(f"batch{k}.zip", content)], round_number=1).added
    zipped = added / (time.perf_counter() - started)
    # Single files: new images (other seeds), one request's worth each.
    singles = [jpeg(photo(10_000 + seed)) for seed in range(min(n, 100))]
    started = time.perf_counter()
    for i, content in enumerate(singles):
        ingest_images(task=task, acting_user=owner, files=[SimpleUploadedFile(f"{i}.jpg", content)], round_number=1)
    single = len(singles) / (time.perf_counter() - started)
    return zipped, single


def build_vit(path: Path, labels):
    from tests.tiny_models import build_tiny_image_classifier

    return build_tiny_image_classifier(
        path, labels, image_size=224, patch_size=16, hidden_size=192, num_hidden_layers=6, num_attention_heads=3,
        intermediate_size=768,
    )


def bench_registry(task, model_dir: Path, *, n: int, batch_size: int, repeats: int, threads: int):
    import torch
    from PIL import Image

    from tasks.loop.artefacts import storage
    from tasks.data.image_files import stored_name
    from tasks.models import ContextImage
    from tasks.loop.registry import load_predictor

    records = list(ContextImage.objects.filter(task=task).order_by("id").values_list("sha256", "ext")[:n])
    hashes = [sha for sha, _ in records]
    paths = [storage().path(stored_name(sha, ext)) for sha, ext in records]
    predictor = load_predictor(model_dir, task=task, batch_size=batch_size)
    model, processor = predictor.model, predictor.processor
    inputs = [{"image": sha} for sha in hashes]
    predictor.predict(inputs[:batch_size])  # warm up

    def registry(rows):
        return predictor.predict([inputs[i] for i in rows], batch_size=batch_size)

    def bare(rows, decoded=None):
        with torch.inference_mode():
            if decoded is None:
                batch = []
                for i in rows:
                    with Image.open(paths[i]) as im:
                        batch.append(im.convert("RGB"))
            else:
                batch = [decoded[i] for i in rows]
            pixels = processor(images=batch, return_tensors="pt")["pixel_values"]
            return model(pixel_values=pixels).logits.argmax(-1)

    torch.set_num_threads(threads)
    print(f"2. registry vs bare: {len(hashes)} stored images, ViT-Tiny shape (224 px, 6 layers), batch {batch_size}, "
          f"{torch.get_num_threads()} torch thread(s), {repeats} repeats interleaved batch by batch ...", flush=True)
    decoded = [Image.open(p).convert("RGB") for p in paths]
    batches = [list(range(start, min(start + batch_size, len(hashes)))) for start in range(0, len(hashes), batch_size)]
    same = all([o["label"] for o in registry(rows)] == [predictor.labels[i] for i in bare(rows).tolist()] for rows in batches)
    calls = (("registry", registry), ("bare", bare), ("bare_decoded", lambda rows: bare(rows, decoded)))
    times = {name: [0.0] * repeats for name, _ in calls}
    for r in range(repeats):
        for k, rows in enumerate(batches):
            order = calls if (r + k) % 2 == 0 else calls[::-1]  # alternate who goes first
            for name, call in order:
                started = time.perf_counter()
                call(rows)
                times[name][r] += time.perf_counter() - started
    rates = {name: len(hashes) / statistics.median(values) for name, values in times.items()}
    return rates, same


def build_vilt(path: Path):
    """A ViLT for VQA of ViLT's layout at a small size (random weights) with its processor."""
    import torch
    from transformers import ViltConfig, ViltForQuestionAnswering

    from tests.vqa_support import ANSWERS, build_tiny_vilt

    build_tiny_vilt(path, image_size=224)  # processor and tokenizer; the model is replaced below
    torch.manual_seed(0)
    config = ViltConfig.from_pretrained(path)
    config.update(dict(hidden_size=192, num_hidden_layers=6, num_attention_heads=3, intermediate_size=768, image_size=224,
                       patch_size=32, max_image_length=-1, num_labels=len(ANSWERS)))
    ViltForQuestionAnswering(config).save_pretrained(path, safe_serialization=True)
    return path


def bench_vqa(shapes, owner, model_dir: Path, *, n: int, batch_size: int, repeats: int, threads: int):
    import torch
    from PIL import Image

    from tasks.loop.artefacts import storage
    from tasks.data.image_files import stored_name
    from tasks.models import ContextImage
    from tasks.loop.registry import load_predictor
    from tests.vqa_support import QUESTIONS, vqa_task

    task = vqa_task(owner)
    records = list(ContextImage.objects.filter(task=shapes).order_by("id").values_list("sha256", "ext")[:n])
    paths = [storage().path(stored_name(sha, ext)) for sha, ext in records]
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(len(records))]
    inputs = [{"image": sha, "question": q} for (sha, _), q in zip(records, questions)]
    predictor = load_predictor(model_dir, task=task, batch_size=batch_size)
    model, processor = predictor.model, predictor.processor
    predictor.predict(inputs[:batch_size])  # warm up

    def registry(rows):
        return predictor.predict([inputs[i] for i in rows], batch_size=batch_size)

    def bare(rows):
        with torch.inference_mode():
            batch = []
            for i in rows:
                with Image.open(paths[i]) as im:
                    batch.append(im.convert("RGB"))
            encoded = processor(images=batch, text=[questions[i] for i in rows], padding=True, truncation=True,
                                max_length=predictor.max_length, return_tensors="pt")
            return model(**encoded).logits.argmax(-1)

    torch.set_num_threads(threads)
    print(f"3. VQA registry vs bare: {len(records)} stored images with questions, ViLT (224 px, patch 32, 6 layers), "
          f"batch {batch_size}, {torch.get_num_threads()} torch thread(s), {repeats} repeats interleaved ...", flush=True)
    batches = [list(range(start, min(start + batch_size, len(records)))) for start in range(0, len(records), batch_size)]
    same = all([o["answer"] for o in registry(rows)] == [predictor.labels[i] for i in bare(rows).tolist()] for rows in batches)
    calls = (("registry", registry), ("bare", bare))
    times = {name: [0.0] * repeats for name, _ in calls}
    for r in range(repeats):
        for k, rows in enumerate(batches):
            for name, call in (calls if (r + k) % 2 == 0 else calls[::-1]):
                started = time.perf_counter()
                call(rows)
                times[name][r] += time.perf_counter() - started
    return {name: len(records) / statistics.median(values) for name, values in times.items()}, same


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/images_test"))
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/10")
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (web workers run one, WEB_TORCH_THREADS)")
    parser.add_argument("--quick", action="store_true", help="200 images, 3 repeats")
    parser.add_argument("--skip-vqa", action="store_true", help="leave out part 3 (visual question answering)")
    args = parser.parse_args()
    if args.quick:
        args.images, args.repeats = 200, 3
    with tempfile.TemporaryDirectory(prefix="bench-vision-") as tmp:
        var_dir = Path(tmp)
        task, owner = setup(args, var_dir)
        zipped, single = bench_upload(task, owner, args.images)
        print(f"   zips of 50:    {zipped:7.1f} images/s per worker   (goal >= 50/s: {'met' if zipped >= 50 else 'NOT met'})")
        print(f"   single files:  {single:7.1f} images/s per worker")
        model_dir = build_vit(var_dir / "vit", task.labels)
        rates, same = bench_registry(task, model_dir, n=min(args.images, 256), batch_size=args.batch_size, repeats=args.repeats,
                                     threads=args.threads)
        print(f"   registry:                     {rates['registry']:7.1f} images/s")
        print(f"   bare (decode from file):      {rates['bare']:7.1f} images/s   registry/bare = {rates['registry'] / rates['bare']:.2f}x "
              f"(goal >= 0.9x: {'met' if rates['registry'] >= 0.9 * rates['bare'] else 'NOT met'})")
        print(f"   bare (already decoded):       {rates['bare_decoded']:7.1f} images/s   registry/bare = {rates['registry'] / rates['bare_decoded']:.2f}x")
        print(f"   same labels as bare: {same}")
        if not args.skip_vqa:
            rates, same = bench_vqa(task, owner, build_vilt(var_dir / "vilt"), n=min(args.images, 256), batch_size=args.batch_size,
                                    repeats=args.repeats, threads=args.threads)
            print(f"   registry:                     {rates['registry']:7.1f} questions/s")
            print(f"   bare (decode from file):      {rates['bare']:7.1f} questions/s   registry/bare = "
                  f"{rates['registry'] / rates['bare']:.2f}x (goal >= 0.9x: {'met' if rates['registry'] >= 0.9 * rates['bare'] else 'NOT met'})")
            print(f"   same answers as bare: {same}")


if __name__ == "__main__":
    main()
