"""The cycle's report: ``report.json`` (every figure), ``report.md`` and small SVG charts.

Pure functions of the figures dict built by ``cycle.driver`` (the task figures by ``cycle.figures``); no ORM, no HTTP.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from leaderboard.plots import PALETTE, performance_by_round_svg


def bar_chart_svg(categories: list[str], series: list[tuple[str, list[float | None]]], *, title: str, unit: str = "",
                  width: int = 640, height: int = 260, max_value: float | None = None) -> str:
    """Return an SVG grouped bar chart: one group per category, one bar per series.

    ``series``: ``[(name, [value per category or None])]``; ``max_value``: the top of the
    y axis (default the largest value, rounded up). Values are printed above the bars.
    """
    values = [v for _, vs in series for v in vs if v is not None]
    top_value = max_value or (max(values) * 1.15 if values and max(values) > 0 else 1.0)
    left, right, top, bottom = 48, 160, 28, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    group_w = plot_w / max(len(categories), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11" role="img" aria-label="{escape(title)}">',
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#dde1e8"/>',
    ]
    for tick in range(5):
        value = top_value * tick / 4
        y = top + plot_h * (1 - tick / 4)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eef0f4"/>')
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{value:.3g}{escape(unit)}</text>')
    for c, category in enumerate(categories):
        x0 = left + c * group_w + group_w * 0.1
        for s, (_, vs) in enumerate(series):
            value = vs[c]
            if value is None:
                continue
            h = plot_h * min(value / top_value, 1.0)
            x = x0 + s * bar_w
            parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w * 0.92:.1f}" height="{h:.1f}" fill="{PALETTE[s % len(PALETTE)]}"/>')
            parts.append(f'<text x="{x + bar_w * 0.46:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle" font-size="9">{value:.3g}</text>')
        parts.append(f'<text x="{left + (c + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{escape(category)}</text>')
    for s, (name, _) in enumerate(series):
        y = top + 8 + 16 * s
        parts.append(f'<rect x="{left + plot_w + 10}" y="{y - 8}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>')
        parts.append(f'<text x="{left + plot_w + 24}" y="{y + 1}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def write_report(directory: Path, figures: dict) -> Path:
    """Write ``report.json``, ``report.md`` and the SVG charts of every task in ``figures`` under ``directory``.

    ``figures``: ``{"run": {...}, "tasks": {code: task figures}}`` as built by ``cycle.driver`` and ``cycle.figures``.
    Returns the path of ``report.md``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.json").write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
    run = figures["run"]
    lines = [
        "# Dynamic adversarial data collection, end to end",
        "",
        f"Run of {run['started_at']} on {run['database']} + {run['redis']}; base encoder {run['base_model']}; "
        f"{run['epochs']} epoch(s) per training; {'limit ' + str(run['limit']) + ' per round' if run['limit'] else 'full data'}.",
        f"Machine: {run['cpus']} CPU cores, load average at start {run['load_start']}, at end {run.get('load_end', 'n/a')}; "
        f"no GPU. Every action went through the REST API of a Gunicorn server ({run['web_workers']} workers, one torch "
        f"thread each) and every training and evaluation through a separate RQ worker process ({run.get('worker_threads', 1)} torch thread(s)).",
        "",
    ]
    for code, task in figures["tasks"].items():
        lines += _task_section(directory, code, task)
    path = directory / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _task_section(directory: Path, code: str, task: dict) -> list[str]:
    lines = [f"## Task `{code}`", "", f"Total {task['total_seconds']:.1f} s.", "", "| step | seconds |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.1f} |" for name, seconds in task["step_seconds"].items()]
    lines.append("")
    (directory / f"{code}-step-times.svg").write_text(
        bar_chart_svg(list(task["step_seconds"]), [("seconds", list(task["step_seconds"].values()))], title=f"{code}: seconds per step", unit=" s"),
        encoding="utf-8",
    )
    lines += [f"![step times]({code}-step-times.svg)", ""]
    for rnd in task["rounds"]:
        lines += _round_section(directory, code, rnd)
    lines += _models_section(directory, code, task)
    return lines


def _round_section(directory: Path, code: str, rnd: dict) -> list[str]:
    n = rnd["round"]
    lines = [f"### Round {n}: {rnd['how']}", ""]
    if rnd.get("model_in_loop"):
        lines.append(f"Model in the loop: `{rnd['model_in_loop']}`.")
    c = rnd["counts"]
    lines += [
        "",
        f"- examples collected: {c['collected']} by {rnd.get('authors', 'n/a')} annotator accounts"
        + (f" in {rnd['collection_seconds']:.1f} s ({rnd['examples_per_second']:.1f} examples/s over HTTP)" if rnd.get("collection_seconds") else ""),
        *(["- refused by the platform's checks: " + ", ".join(f"{n} ({why})" for why, n in rnd["refused"].items())] if rnd.get("refused") else []),
        f"- fooled the model in the loop (decided by the server): {c['fooled']} (MER {_pct(c['mer'])})",
        f"- validations: {rnd['validations']['recorded']} recorded by {rnd['validations']['validators']} validator accounts"
        + (f"; {rnd['validations']['refused_settled']} later votes refused because consensus was already reached" if rnd['validations'].get('refused_settled') else "")
        + (f" in {rnd['validations']['seconds']:.1f} s" if rnd['validations'].get('seconds') else ""),
        f"- states: {', '.join(f'{k} {v}' for k, v in rnd['states'].items())}",
        f"- verified fooled: {c['verified_fooled']}; **vMER {_pct(c['vmer'])}**",
    ]
    agreement = rnd.get("agreement")
    if agreement:
        lines.append(
            f"- Fleiss' κ on the voted categories (platform, `round_agreement`): **{_num(agreement['platform_kappa'])}** "
            f"over {agreement['platform_items']} examples × {agreement['platform_raters']} votes; "
            f"on all five votes of the file: {_num(agreement['file_kappa'])}; published: {agreement['published']}"
        )
        if agreement.get("note"):
            lines.append(f"  ({agreement['note']})")
    if rnd.get("datasets"):
        lines.append("- closed into datasets: " + ", ".join(f"`{d['name']}` ({d['items']} items, {d['access']})" for d in rnd["datasets"]))
    lines += ["", "| label | collected | fooled | verified correct | verified fooled |", "|---|---:|---:|---:|---:|"]
    labels = rnd["per_label"]
    for label, row in labels.items():
        lines.append(f"| {label} | {row['collected']} | {row['fooled']} | {row['verified_correct']} | {row['verified_fooled']} |")
    name = f"{code}-round{n}-labels.svg"
    (directory / name).write_text(
        bar_chart_svg(
            list(labels),
            [(key.replace("_", " "), [labels[label][key] for label in labels]) for key in ("collected", "fooled", "verified_correct", "verified_fooled")],
            title=f"{code} round {n}: examples per label",
        ),
        encoding="utf-8",
    )
    lines += ["", f"![examples per label]({name})", ""]
    return lines


def _models_section(directory: Path, code: str, task: dict) -> list[str]:
    models = task["models"]
    lines = ["### Models", "", "| model | trained on | training s | " + " | ".join(f"`{d}`" for d in task["scoring_datasets"]) + " | Dynascore | rank |",
             "|---|---|---:|" + "---:|" * len(task["scoring_datasets"]) + "---:|---:|"]
    for m in models:
        cells = [_pct(m["per_dataset"].get(d)) for d in task["scoring_datasets"]]
        lines.append(
            f"| `{m['name']}` | {m['trained_on']} | {_num(m.get('training_seconds'), 1)} | " + " | ".join(cells)
            + f" | {_num(m.get('dynascore'), 2)} | {m.get('rank', 'n/a')} |"
        )
    lines += ["", f"Performance metric: {task['perf_metric']}. Per round (the leaderboard's weighted mean over the round's scoring datasets):", "",
              "| model | " + " | ".join(f"round {r}" for r in task["round_numbers"]) + " |", "|---|" + "---:|" * len(task["round_numbers"])]
    for m in models:
        lines.append(f"| `{m['name']}` | " + " | ".join(_pct(m["per_round"].get(str(r))) for r in task["round_numbers"]) + " |")
    series = [{"name": m["name"], "points": [(int(r), 100 * v) for r, v in sorted(m["per_round"].items(), key=lambda kv: int(kv[0])) if v is not None]} for m in models]
    svg = str(performance_by_round_svg(series))
    if svg:
        name = f"{code}-performance-by-round.svg"
        (directory / name).write_text(svg.replace('<svg class="round-plot"', '<svg font-family="sans-serif" font-size="11"'), encoding="utf-8")
        lines += ["", f"![performance per round]({name})"]
    if task.get("dynascore_rules"):
        lines += ["", "Dynascore rules applied (the leaderboard's, default weights):", ""]
        lines += [f"- {r['label']}: weight {r['weight']}, {r['explanation']}" for r in task["dynascore_rules"]]
    if task.get("notes"):
        lines += [""] + [f"- {note}" for note in task["notes"]]
    lines.append("")
    return lines
