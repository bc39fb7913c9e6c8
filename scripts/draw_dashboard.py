"""Draw the Grafana dashboard (monitoring/dashboard.json) from a running Prometheus, as a PNG.

    python scripts/draw_dashboard.py --prometheus http://127.0.0.1:9090 --minutes 10 --out dashboard.png

Each time-series panel's queries run as Grafana would run them (Prometheus' ``/api/v1/query_range``
over the last ``--minutes``, ``$job`` matching every job, ``$__rate_interval`` as ``--rate-interval``)
and are drawn where the panel's ``gridPos`` puts it (24 columns; one grid row is ``ROW_INCHES``
high), under its title, with one line per series named by its labels. Panels that returned no
series say so in their box. Prints one JSON line: ``{"panels": N, "with_data": [titles...]}``.

For operators without Grafana (and for the docs' picture, drawn from a test run); Grafana itself
imports the JSON unchanged. Exits 2 when Prometheus cannot be reached or rejects a query.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import requests  # noqa: E402

DASHBOARD = Path(__file__).resolve().parent.parent / "monitoring" / "dashboard.json"
COLUMNS = 24
ROW_INCHES = 0.32  # one gridPos unit of height
WIDTH_INCHES = 18.0


class PrometheusError(Exception):
    """Prometheus could not be reached, or answered a query with an error (the message says which)."""


def panel_queries(panel: dict, *, rate_interval: str) -> list[tuple[str, str]]:
    """``[(expr, legendFormat), ...]`` of a panel, with Grafana's ``$job`` and ``$__rate_interval``
    replaced (``$job`` by a regex matching every job)."""
    return [
        (t["expr"].replace("$job", ".+").replace("$__rate_interval", rate_interval), t.get("legendFormat", ""))
        for t in panel.get("targets", []) if t.get("expr")
    ]


def query_range(prometheus: str, expr: str, *, start: float, end: float, step: float) -> list[dict]:
    """Prometheus' range query: ``[{"metric": {label: value}, "values": [[unix s, "value"], ...]}, ...]``.
    Raises ``PrometheusError``."""
    try:
        answer = requests.get(f"{prometheus}/api/v1/query_range", timeout=30,
                              params={"query": expr, "start": start, "end": end, "step": step}).json()
    except (requests.RequestException, ValueError) as error:
        raise PrometheusError(f"{prometheus}: {error}") from error
    if answer.get("status") != "success":
        raise PrometheusError(f"{expr}: {answer.get('error', answer)}")
    return answer["data"]["result"]


def series_name(metric: dict, legend: str) -> str:
    """A line's name: the target's ``legendFormat`` with ``{{label}}`` filled in, else its labels."""
    if legend:
        for key, value in metric.items():
            legend = legend.replace("{{" + key + "}}", value)
        return legend
    labels = {k: v for k, v in metric.items() if k not in ("job", "instance", "__name__")}
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "value"


def draw(dashboard: dict, prometheus: str, *, start: float, end: float, step: float, rate_interval: str,
         out: Path) -> list[str]:
    """Draw ``dashboard``'s panels with data from ``prometheus`` between ``start`` and ``end`` (Unix
    seconds) into the PNG ``out``; return the titles of the panels that had data. Raises ``PrometheusError``."""
    panels = dashboard["panels"]
    height_units = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    figure = plt.figure(figsize=(WIDTH_INCHES, height_units * ROW_INCHES + 0.6))
    figure.suptitle(f"{dashboard['title']}  ·  {datetime.fromtimestamp(start):%Y-%m-%d %H:%M:%S}"
                    f" – {datetime.fromtimestamp(end):%H:%M:%S}", x=0.01, ha="left", fontsize=13)
    top = 1 - 0.6 / (height_units * ROW_INCHES + 0.6)

    def box(grid: dict) -> list[float]:  # [left, bottom, width, height] in figure fractions, room for ticks and title
        return [grid["x"] / COLUMNS + 0.035, top * (1 - (grid["y"] + grid["h"]) / height_units) + 0.018,
                grid["w"] / COLUMNS - 0.05, top * grid["h"] / height_units - 0.032]

    with_data = []
    for panel in panels:
        if panel.get("type") == "row":
            grid = panel["gridPos"]
            figure.text(0.01, top * (1 - grid["y"] / height_units) - 0.004, panel["title"], fontsize=12,
                        fontweight="bold", va="top")
            continue
        axes = figure.add_axes(box(panel["gridPos"]))
        axes.set_title(panel["title"], fontsize=9, loc="left")
        lines = 0
        for expr, legend in panel_queries(panel, rate_interval=rate_interval):
            for result in query_range(prometheus, expr, start=start, end=end, step=step):
                points = [(datetime.fromtimestamp(float(t)), float(v)) for t, v in result["values"]]
                if not points:
                    continue
                axes.plot([p[0] for p in points], [p[1] for p in points], linewidth=1.2,
                          label=series_name(result["metric"], legend)[:48])
                lines += 1
        if lines:
            with_data.append(panel["title"])
            axes.legend(fontsize=6, loc="upper left", frameon=False, ncol=1 + (lines > 6))
        else:
            axes.text(0.5, 0.5, "no data", transform=axes.transAxes, ha="center", va="center", color="#888")
        axes.set_xlim(datetime.fromtimestamp(start), datetime.fromtimestamp(end))
        axes.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S"))
        axes.tick_params(labelsize=6)
        axes.grid(alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return with_data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prometheus", required=True, help="Prometheus' base URL, e.g. http://127.0.0.1:9090")
    parser.add_argument("--out", required=True, type=Path, help="the PNG to write")
    parser.add_argument("--minutes", type=float, default=15, help="how far back to draw (default 15)")
    parser.add_argument("--step", type=float, default=0, help="seconds between points (default: 1/200 of the range)")
    parser.add_argument("--rate-interval", default="1m", help="what $__rate_interval stands for (default 1m)")
    parser.add_argument("--dashboard", type=Path, default=DASHBOARD)
    args = parser.parse_args(argv)
    end = time.time()
    start = end - args.minutes * 60
    try:
        with_data = draw(json.loads(args.dashboard.read_text()), args.prometheus.rstrip("/"), start=start, end=end,
                         step=args.step or max(1.0, (end - start) / 200), rate_interval=args.rate_interval, out=args.out)
    except PrometheusError as error:
        print(f"draw_dashboard: {error}", file=sys.stderr)
        return 2
    panels = sum(1 for p in json.loads(args.dashboard.read_text())["panels"] if p.get("type") != "row")
    print(json.dumps({"panels": panels, "with_data": with_data}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
