"""The Hugging Face dataset card (``README.md``) of a release: a YAML header the hub reads
(license, task_categories, language, size_categories, pretty_name, configs with ``data_files`` per
split) and the sections of Datasheets for Datasets (Gebru et al., "Datasheets for Datasets",
CACM 64(12), 2021): motivation, composition, collection process, preprocessing and labelling,
uses, distribution, maintenance. Figures come from ``Release.stats`` (the platform's records);
motivation, intended uses and limitations are the owner's text (``ReleaseCardText``)."""

from __future__ import annotations

import yaml

from releases.calculations import size_category

#: SPDX ids the hub's ``license`` field takes, for the licence URLs the platform stores.
SPDX = {
    "https://creativecommons.org/licenses/by/4.0/": "cc-by-4.0",
    "https://creativecommons.org/licenses/by-sa/4.0/": "cc-by-sa-4.0",
    "https://creativecommons.org/licenses/by-nc/4.0/": "cc-by-nc-4.0",
    "https://creativecommons.org/publicdomain/zero/1.0/": "cc0-1.0",
}
NOT_GIVEN = "_Not written by the task's owners._"


def license_id(license: str) -> str:
    """The hub's licence id for ``license`` (a URL or an SPDX id): known URLs mapped, ids lower-cased, else ``other``."""
    if license in SPDX:
        return SPDX[license]
    return license.lower() if license and "/" not in license else "other"


def card_header(*, task, version: str, license: str, files: list[dict], example_count: int) -> dict:
    """The YAML header: one ``default`` config with every round's files per split, then one config
    per round (``round<n>``); data files are the Parquet ones."""
    parquet = [f for f in files if f["format"] == "parquet"]
    splits = sorted({f["split"] for f in parquet})
    rounds = sorted({f["round"] for f in parquet})
    configs = [{"config_name": "default", "default": True, "data_files": [
        {"split": s, "path": [f["name"] for f in parquet if f["split"] == s]} for s in splits]}]
    for number in rounds:
        configs.append({"config_name": f"round{number}", "data_files": [
            {"split": f["split"], "path": f["name"]} for f in parquet if f["round"] == number]})
    header = {
        "license": license_id(license),
        "language": list((task.config or {}).get("languages") or ["en"]),
        "size_categories": [size_category(example_count)],
        "pretty_name": f"{task.name} (Dynabench release {version})",
        "tags": ["dynabench", "adversarial", "dynamic-adversarial-data-collection"],
        "configs": configs,
    }
    if task.spec.release_task_category:
        header["task_categories"] = [task.spec.release_task_category]
    return header


def _percent(value) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _number(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render_card(*, task, version: str, license: str, files: list[dict], example_count: int, stats: dict,
                text: dict, changelog: dict, citation: str, published: str) -> str:
    """Return the card's Markdown: ``---`` YAML header ``---`` then the datasheet. ``text``:
    ``{"motivation", "intended_uses", "limitations"}`` (the owner's Markdown, shown as written)."""
    header = yaml.safe_dump(card_header(task=task, version=version, license=license, files=files,
                                        example_count=example_count), sort_keys=False, allow_unicode=True)
    rounds = stats.get("rounds", [])
    round_rows = "\n".join(
        f"| {r['number']} | {(r['start'] or '—')[:10]} | {(r['end'] or '—')[:10]} | {', '.join(r['models']) or '—'} | "
        f"{r['collected']} | {r['verified_fooled']} | {_percent(r['vmer'])} | {_number(r['validations_per_example'], 2)} | "
        f"{_number((r['agreement'] or {}).get('krippendorff_alpha'))} | "
        f"{(r['pay'] or {}).get('per_example', '—')} {(r['pay'] or {}).get('currency', '') if r['pay'] else ''} | "
        f"{_percent(r['ai_assisted_share'])} |"
        for r in rounds
    )
    file_rows = "\n".join(f"| `{f['name']}` | {f['rows']} | {f['size']} | `{f['sha256']}` |" for f in files)
    split_rows = ", ".join(f"{split}: {rows}" for split, rows in stats.get("splits", {}).items())
    log = _changelog(changelog)
    return f"""---
{header}---

# {task.name}: Dynabench dataset release {version}

Published {published} on Dynabench (task `{task.code}`, kind {task.kind}). Licence: {license}.
{example_count} examples ({split_rows}). Load it in one line:

```python
from datasets import load_dataset
ds = load_dataset("parquet", data_files={{{", ".join(f'"{s}": "data/*-{s}.parquet"' for s in stats.get("splits", {}))}}})
```

## Motivation

{text.get("motivation") or NOT_GIVEN}

## Composition

Each example is one item of a closed round's dataset: its `uid`, `round`, `split`, `tag` and the
task's fields. Hidden test sets (labels kept on the platform for the leaderboard) are not part of
this release.

| file | rows | bytes | sha256 |
|---|---|---|---|
{file_rows}

## Collection process

Examples were written on Dynabench by crowd annotators trying to fool the model(s) in the loop of
each round. The figures below come from the platform's records (not editable): vMER is the share
of collected examples that fooled the model and were validated correct.

| round | start | end | models in the loop | collected | verified fooled | vMER | validations per example | agreement (Krippendorff α) | pay per example | AI-assisted share |
|---|---|---|---|---|---|---|---|---|---|---|
{round_rows}

A "—" means the platform holds no record of it (for example, data imported rather than collected).

## Preprocessing, cleaning and labelling

Consensus rule: {stats.get("consensus", {}).get("rule", "")} Annotators are named nowhere in the files.

## Uses

{text.get("intended_uses") or NOT_GIVEN}

### Limitations

{text.get("limitations") or NOT_GIVEN}

## Distribution

Licence: {license}. Every file (media files too) is listed with its size and sha256 on the
release's page and by the API (`dynabench release download` saves that list as `manifest.json` and
checks every file against it). The release's content digest is the sha256 of the sorted `sha256sum`
lines of its data files.
The files of a release never change: a new release gets a new version.

## Maintenance

Versions follow semantic versioning: a new round gives a new major version, relabelled, added or
removed examples a new minor version, a change of this card's text a new patch version.

{log}

## Citation

```bibtex
{citation}
```
"""


def _changelog(changelog: dict) -> str:
    if not changelog or changelog.get("previous") is None:
        return "### Changes\n\nThe first release."
    parts = [f"### Changes since {changelog['previous']}", ""]
    if changelog.get("new_rounds"):
        parts.append(f"- New rounds: {', '.join(str(n) for n in changelog['new_rounds'])}")
    for key in ("added", "removed", "relabelled"):
        part = changelog.get(key) or {"count": 0, "uids": []}
        listed = ", ".join(f"`{u}`" for u in part["uids"][:20]) + (" …" if part["count"] > 20 else "")
        parts.append(f"- {key.capitalize()}: {part['count']}" + (f" ({listed})" if part["count"] else ""))
    return "\n".join(parts)
