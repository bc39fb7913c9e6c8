"""The researcher's workflow through the Python client only, against a running server.

Run ``scripts/api_demo.sh`` (sets up a server and runs this), or by hand::

    DYNABENCH_URL=http://127.0.0.1:8000 DYNABENCH_API_KEY=... python benchmarks/api_client_demo.py --model-dir path/to/hf-model

1. downloads round 1 of ``sentiment``; 2. writes an example and reads whether it fooled the
model in the loop; 3. submits a model directory and waits for its results. Prints what came
back and how long each step took. Imports nothing but the client (and the standard library).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynabench_client import DynabenchClient, DynabenchError  # noqa: E402

EXAMPLE = "The staff could not have been nicer, which almost made up for the cold soup."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("DYNABENCH_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("DYNABENCH_API_KEY"))
    parser.add_argument("--model-dir", default=os.environ.get("DEMO_MODEL_DIR"), required=not os.environ.get("DEMO_MODEL_DIR"))
    parser.add_argument("--timeout", type=float, default=600, help="Seconds to wait for the evaluation.")
    args = parser.parse_args()
    assert "django" not in sys.modules, "the demo must use the client only"

    client = DynabenchClient(api_key=args.token, base_url=args.url)
    print(f"user: {client.me()['username']} at {args.url}")

    started = time.perf_counter()
    rows = client.download_round("sentiment", 1)
    download_s = time.perf_counter() - started
    sources = sorted({r["source"] for r in rows})
    print(f"1. round 1 of sentiment: {len(rows)} rows from {sources} in {download_s:.2f} s ({len(rows) / download_s:,.0f} rows/s)")
    print(f"   first row: {json.dumps(rows[0])[:160]}")

    started = time.perf_counter()
    example = client.create_example("sentiment", text=EXAMPLE, label="positive")
    example_ms = (time.perf_counter() - started) * 1000
    output = example["model_output"]
    probs = ", ".join(f"{k} {v:.2f}" for k, v in output.get("probs", {}).items())
    print(f"2. example {example['id']}: I said positive, the model said {output['label']} ({probs}); "
          f"fooled: {example['model_wrong']} ({example_ms:.0f} ms incl. fetching a context)")

    started = time.perf_counter()
    try:
        model_id = client.submit_model(model_path=args.model_dir, task="sentiment", description="A tiny BERT submitted by the API demo.")
    except DynabenchError as error:
        print(f"3. submission refused: {error.code}: {error.detail}")
        return 1
    submit_s = time.perf_counter() - started
    print(f"3. submitted {args.model_dir} as model {model_id} in {submit_s:.2f} s; waiting for its unpacking and evaluation...")
    started = time.perf_counter()
    results = client.wait_for_results(model_id, timeout=args.timeout, poll=1.0)
    wait_s = time.perf_counter() - started
    rounds = {k: round(v, 4) for k, v in results.items() if k.startswith("round")}
    print(f"   status {results['status']} after {wait_s:.1f} s; dynascore {results['dynascore']}; {rounds}")
    for name, run in results["datasets"].items():
        print(f"   {name}: {run['status']}, performance {run['performance']}, {run['n_examples']} examples, "
              f"{(run['throughput'] or 0):.0f} examples/s")
    return 0 if results["status"] == "evaluated" else 1


if __name__ == "__main__":
    sys.exit(main())
