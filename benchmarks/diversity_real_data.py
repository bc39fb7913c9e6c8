"""Diversity figures of real rounds collected on Dynabench: DynaSent round 2 (dev + test, written to fool
Model 1) and ANLI R1-R3 dev (hypotheses that fooled the model in the loop), through the same function
the round report uses (``annotation/diversity/figures.py:round_figures``) and the packaged MiniLM.

Run: .venv/bin/python benchmarks/diversity_real_data.py [--threshold 0.9] [--pairs 20] [--json FILE]

"Validated fooling": DynaSent, the majority label of its five validators (``gold_label``) differs from
Model 1's label; ANLI dev, every row (the dev sets hold only verified examples that fooled the model).
Data: ``../shared/data/`` (or ``$DYNABENCH_SHARED_DATA``); see its README for licences.
"""

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from annotation.diversity import calculations, encoder as encoders, figures  # noqa: E402

DATA = Path(os.environ.get("DYNABENCH_SHARED_DATA", REPO.parent / "shared" / "data"))


def dynasent_round2() -> dict:
    rows = []
    for split in ("dev", "test"):
        with open(DATA / "dynasent" / f"dynasent-v1.1-round02-dynabench-{split}.jsonl", encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh]
    return {"texts": [r["sentence"] for r in rows], "authors": [r["sentence_author"] for r in rows],
            "fooled": [r["gold_label"] is not None and r["gold_label"] != r["model_1_label"] for r in rows],
            "ids": [r["text_id"] for r in rows]}


def anli(round_number: int) -> dict:
    with open(DATA / "anli" / f"ANLI_analysis_r{round_number}_dev.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {"texts": [r["statement"] for r in rows], "authors": [r["uid"] for r in rows],  # no writer ids: per-author left out
            "fooled": [True] * len(rows), "ids": [r["uid"] for r in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--pairs", type=int, default=20, help="near-duplicate pairs printed per round")
    parser.add_argument("--json", type=Path, help="write every round's figures here")
    parser.add_argument("--read", type=int, default=20, help="closest pairs printed to read (cosine >= 0.8, any threshold)")
    parser.add_argument("--cache", type=Path, help="a folder keeping each round's embeddings (.npy) between runs")
    args = parser.parse_args()
    encoder = encoders.get_encoder()
    rounds = {"DynaSent R2": dynasent_round2(), "ANLI R1": anli(1), "ANLI R2": anli(2), "ANLI R3": anli(3)}
    results = {}
    for name, data in rounds.items():
        start = time.perf_counter()
        cached = args.cache / f"{name.replace(' ', '-')}-{encoder.sha256[:12]}.npy" if args.cache else None
        if cached and cached.exists():
            X = np.load(cached)
        else:
            X = encoder.embed(data["texts"])
            if cached:
                cached.parent.mkdir(parents=True, exist_ok=True)
                np.save(cached, X)
        embed_s = time.perf_counter() - start
        result = figures.round_figures(texts=data["texts"], X=X, authors=data["authors"], fooled=data["fooled"],
                                       ids=data["ids"], threshold=args.threshold)
        result.pop("assigned")
        leaders = result.pop("leaders")
        result["groups"] = len(set(leaders.values()))
        text_of = dict(zip(data["ids"], data["texts"]))
        result["pair_texts"] = [[text_of[a], text_of[b], s] for a, b, s in result["pairs"][:args.pairs]]
        results[name] = result
        largest = result["clusters"][0] if result["clusters"] else None
        print(f"## {name}: {result['examples']} examples ({result['fooling_examples']} validated fooling), embedded in {embed_s:.1f} s")
        print(f"Vendi {result['vendi']:.1f} [{result['vendi_low']:.1f}, {result['vendi_high']:.1f}]; distinct-1 {result['distinct_1']:.3f}, "
              f"distinct-2 {result['distinct_2']:.3f}; self-BLEU {result['self_bleu']:.1f}")
        if result["vendi_at_500"]:
            mean, low, high = result["vendi_at_500"]
            print(f"Vendi at 500 examples: {mean:.1f} [{low:.1f}, {high:.1f}]")
        print(f"near-duplicate pairs at cosine >= {args.threshold}: {result['near_duplicate_pairs']}; lexical (Jaccard >= 0.8): {result['lexical_pairs']}; "
              f"deduplicated: {result['groups']} of {result['examples']} examples")
        print(f"clusters: {len(result['clusters'])} ({result['noise']} fooling examples in none)"
              + (f"; largest {largest['size']} ({largest['share']:.1%}): {', '.join(largest['terms'])}" if largest else ""))
        for c in result["clusters"][:6]:
            print(f"  cluster {c['cluster']}: {c['size']} ({c['share']:.1%}) {', '.join(c['terms'][:6])} | e.g. {c['examples'][0][1][:90]!r}")
        if result["per_author"]:
            authors = result["per_author"]
            print(f"per author (>= 5 examples): {len(authors)}, Vendi from {authors[0]['vendi']:.1f} to {authors[-1]['vendi']:.1f}")
        for a, b, s in result["pair_texts"]:
            print(f"  {s:.3f} | {a[:100]!r} | {b[:100]!r}")
        if args.read:
            print(f"closest {args.read} pairs (cosine >= 0.8), to read:")
            for i, j, s in calculations.cosine_pairs(X, threshold=0.8)[:args.read]:
                print(f"  {s:.3f} | {data['texts'][i][:110]!r} | {data['texts'][j][:110]!r}")
        print()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
