"""Benchmark of diversity and near-duplicates (annotation/diversity/), each figure next to its reference in one run.

Run: .venv/bin/python benchmarks/diversity.py [--texts 1000] [--vectors 200000] [--queries 500] [--requests 60]

1. Embedding throughput: ``Encoder.embed`` (annotation/diversity/encoder.py: batches sorted by length,
   mean pooling, normalisation) vs a bare batched forward of the same model (``tokenizer(batch,
   padding=True, truncation=True)`` then ``model(**batch)`` under ``torch.inference_mode``, list order,
   no pooling), same batch size, same texts (DynaSent round 1 dev sentences), interleaved, best of 3.
   Goal: ratio >= 0.9. Also against the bare forward on the same length-sorted batches, which
   isolates the cost of pooling and normalising from the gain of sorting.
2. Nearest neighbours: the per-task index's settings (annotation/diversity/index.py: usearch HNSW,
   cosine, f32) over ``--vectors`` vectors vs exact search (numpy ``X @ q``): build time, memory of the
   index (usearch's ``memory_usage``), p95 of one query (k=10), recall@10 against the exact top 10.
   Vectors: MiniLM embeddings of real sentences (DynaSent and ANLI) each jittered with Gaussian noise
   (sigma 0.05 per dimension) and normalised, so the set has the clustered shape of real text rather
   than uniform noise; queries are held out from the same mixture. Goal: 1,000,000 vectors, p95 <= 10 ms,
   recall >= 0.95.
3. Create page: p95 of the create page's submission (``POST /tasks/sentiment/write/submit``, the whole
   ``create_example`` with a MiniLM classifier in the loop) with the round's rule ``refuse`` vs ``off``,
   alternating. Under ``refuse`` the page's closeness readout (``POST .../write/closeness``) embeds the
   draft first, as the page does while the annotator types, and the submission reads its vector back
   from the cache; the readout's own time is printed beside. In process (Django's test client), SQLite
   and the embedded Redis in a temporary folder.

Data: ``../shared/data/`` (or ``$DYNABENCH_SHARED_DATA``).
"""

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

VAR = tempfile.mkdtemp(prefix="bench-diversity-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ["DJANGO_SETTINGS_MODULE"] = "dynabench.settings"
os.environ["DYNABENCH_VAR_DIR"] = VAR
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
os.environ["LOG_LEVEL"] = "WARNING"
os.environ["ANNOTATION_SUBMISSIONS_PER_MINUTE"] = "100000"  # part 3 measures the page, not the rate limit
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("DYNABENCH_SHARED_DATA", REPO.parent / "shared" / "data"))

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from annotation.diversity import encoder as encoders, index  # noqa: E402


def p(values, q):
    return float(np.percentile(np.asarray(values), q))


def sentences(limit: int | None = None) -> list[str]:
    with open(DATA / "dynasent" / "dynasent-v1.1-round01-yelp-dev.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["sentence"] for line in fh]
    for r in (1, 2, 3):
        with open(DATA / "anli" / f"ANLI_analysis_r{r}_dev.csv", encoding="utf-8", newline="") as fh:
            texts += [row["statement"] for row in csv.DictReader(fh)]
    return texts[:limit] if limit else texts


def embedding_throughput(texts: list[str], batch_size: int) -> dict:
    import torch

    encoder = encoders.get_encoder()

    def bare(order):
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = encoder.tokenizer(order[start:start + batch_size], padding=True, truncation=True,
                                          max_length=encoders.MAX_TOKENS, return_tensors="pt")
                encoder.model(**batch)

    by_length = sorted(texts, key=len)
    ours, theirs, sorted_bare = [], [], []
    encoder.embed(texts[:batch_size])  # warm
    for _ in range(3):
        start = time.perf_counter()
        encoder.embed(texts, batch_size=batch_size)
        ours.append(len(texts) / (time.perf_counter() - start))
        start = time.perf_counter()
        bare(texts)
        theirs.append(len(texts) / (time.perf_counter() - start))
        start = time.perf_counter()
        bare(by_length)
        sorted_bare.append(len(texts) / (time.perf_counter() - start))
    return {"texts": len(texts), "batch_size": batch_size, "embed_per_s": max(ours), "bare_per_s": max(theirs),
            "ratio": max(ours) / max(theirs), "bare_sorted_per_s": max(sorted_bare),
            "ratio_to_sorted": max(ours) / max(sorted_bare), "torch_threads": torch.get_num_threads()}


def nearest_neighbours(n: int, queries: int, base: np.ndarray, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)

    def mixture(count):
        out = np.empty((count, base.shape[1]), dtype=np.float32)
        for start in range(0, count, 100_000):
            m = min(100_000, count - start)
            block = base[rng.integers(0, len(base), m)] + rng.normal(0, 0.05, (m, base.shape[1])).astype(np.float32)
            out[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
        return out

    X = mixture(n)
    Q = mixture(queries)
    built = index.new_index(X.shape[1])
    start = time.perf_counter()
    built.add(np.arange(n, dtype=np.uint64), X)
    build_s = time.perf_counter() - start
    latencies, hits = [], 0
    exact_ms = []
    for q in Q:
        t0 = time.perf_counter()
        found = built.search(q, 10)
        latencies.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        sims = X @ q
        truth = np.argpartition(-sims, 10)[:10]
        exact_ms.append((time.perf_counter() - t0) * 1000)
        hits += len(set(found.keys.tolist()) & set(truth.tolist()))
    return {"vectors": n, "dim": int(X.shape[1]), "build_s": build_s, "adds_per_s": n / build_s,
            "index_memory_gib": built.memory_usage / 2**30, "vectors_gib": X.nbytes / 2**30,
            "p50_ms": p(latencies, 50), "p95_ms": p(latencies, 95), "exact_p95_ms": p(exact_ms, 95),
            "recall_at_10": hits / (10 * len(Q)), "expansion_search": index.EXPANSION_SEARCH}


def create_page(requests: int) -> dict:
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from annotation.diversity import rules
    from benchmarks.annotation import fresh_minilm_dir
    from dynabench.roles import ensure_role_groups
    from tasks.data.seed import seed_default_tasks
    from tasks.models import MLModel

    call_command("migrate", verbosity=0)
    ensure_role_groups()
    task = {t.code: t for t in seed_default_tasks()}["sentiment"]
    task.config = {**task.config, "daily_example_cap": 100000}
    task.save()
    path = fresh_minilm_dir(Path(VAR) / "minilm-sentiment")
    model = MLModel.objects.create(task=task, name="MiniLM sentiment", path=str(path))
    round = task.current_round()
    round.target_models.set([model])
    owner = User.objects.create_user(username="owner", password="bench-password-1")
    task.owners.add(owner)
    user = User.objects.create_user(username="writer", password="bench-password-1")
    user.groups.add(Group.objects.get(name="annotator"))
    client = Client()
    client.force_login(user)
    texts = sentences(requests * 2 + 20)[20:]
    page = client.get(f"/tasks/{task.code}/write/").content.decode()
    import re

    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    timings = {"off": [], "refuse": [], "closeness": []}
    htmx = {"HTTP_HX_REQUEST": "true"}
    for i in range(requests * 2):
        mode = "off" if i % 2 else "refuse"
        rules.set_round_rule(round=round, acting_user=owner, threshold=0.95, mode=mode)
        data = {"token": token, "text": texts[i], "label": "positive", "submission_key": f"bench-key-{i:06d}"}
        if mode == "refuse":  # the page's readout, asked while the annotator types the draft they then submit
            start = time.perf_counter()
            client.post(f"/tasks/{task.code}/write/closeness", {"text": texts[i]}, **htmx)
            if i >= 4:
                timings["closeness"].append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        response = client.post(f"/tasks/{task.code}/write/submit", data, **htmx)
        took = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            print(f"   submission {i} ({mode}) answered {response.status_code}", flush=True)
        elif i >= 4:  # the first four warm the model, the encoder and the index
            timings[mode].append(took)
    return {"submissions_each": len(timings["off"]), "off_p50_ms": p(timings["off"], 50), "off_p95_ms": p(timings["off"], 95),
            "refuse_p50_ms": p(timings["refuse"], 50), "refuse_p95_ms": p(timings["refuse"], 95),
            "p95_ratio": p(timings["refuse"], 95) / p(timings["off"], 95),
            "closeness_p50_ms": p(timings["closeness"], 50), "closeness_p95_ms": p(timings["closeness"], 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000, help="texts embedded in part 1")
    parser.add_argument("--batch-size", type=int, default=encoders.BATCH_SIZE)
    parser.add_argument("--vectors", type=int, default=200_000, help="vectors indexed in part 2 (goal: 1,000,000)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--requests", type=int, default=60, help="submissions per mode in part 3")
    parser.add_argument("--skip", nargs="*", default=[], choices=["embed", "nn", "page"])
    args = parser.parse_args()
    results = {}
    texts = sentences()
    if "embed" not in args.skip:
        results["embedding"] = r = embedding_throughput(texts[:args.texts], args.batch_size)
        print(f"1. embedding: {r['embed_per_s']:.0f} texts/s vs bare forward {r['bare_per_s']:.0f}/s: ratio {r['ratio']:.2f} "
              f"(goal >= 0.9); vs the bare forward on the same length-sorted batches {r['bare_sorted_per_s']:.0f}/s: "
              f"ratio {r['ratio_to_sorted']:.2f} ({r['texts']} texts, batch {r['batch_size']}, {r['torch_threads']} torch threads)", flush=True)
    if "nn" not in args.skip:
        base = encoders.get_encoder().embed(texts[:3000])
        results["nearest_neighbours"] = r = nearest_neighbours(args.vectors, args.queries, base)
        print(f"2. nearest neighbours, {r['vectors']:,} x {r['dim']}: build {r['build_s']:.0f} s ({r['adds_per_s']:.0f}/s), "
              f"index {r['index_memory_gib']:.2f} GiB (vectors alone {r['vectors_gib']:.2f} GiB); query p50 {r['p50_ms']:.2f} ms, "
              f"p95 {r['p95_ms']:.2f} ms vs exact p95 {r['exact_p95_ms']:.1f} ms; recall@10 {r['recall_at_10']:.3f} "
              f"(goal: 1,000,000, p95 <= 10 ms, recall >= 0.95)", flush=True)
    if "page" not in args.skip:
        results["create_page"] = r = create_page(args.requests)
        print(f"3. create page submission p95: refuse {r['refuse_p95_ms']:.1f} ms vs off {r['off_p95_ms']:.1f} ms: ratio {r['p95_ratio']:.2f} "
              f"(p50 {r['refuse_p50_ms']:.1f} vs {r['off_p50_ms']:.1f}); closeness readout p95 {r['closeness_p95_ms']:.1f} ms "
              f"({r['submissions_each']} submissions each)", flush=True)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    try:
        main()
    finally:
        from dynabench import embedded_redis

        embedded_redis.stop(Path(VAR) / "redis.sock")  # the embedded Redis Django started in the scratch folder
