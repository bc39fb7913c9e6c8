"""Croissant 1.0 JSON-LD (MLCommons) of a release, with its Responsible-AI fields (Croissant RAI
1.0: data collection, annotation protocol and platform, annotations per item, limitations, uses,
personal information, maintenance), filled from the release's records.

Each JSONL data file is a ``cr:FileObject`` (its sha256, ``contentUrl`` relative to the release's
folder) with one ``cr:RecordSet`` of its rows (``round<n>-<split>``), one ``cr:Field`` per column;
``mlcroissant.Dataset(jsonld="<folder>/croissant.json")`` reads the records of a downloaded release."""

from __future__ import annotations

from releases.files import FIXED
from tasks.data.croissant import CONFORMS_TO, CONTEXT

TYPES = {"uid": "sc:Text", "round": "sc:Integer", "split": "sc:Text", "tag": "sc:Text"}


def release_croissant(*, task, version: str, license: str, files: list[dict], columns: list[dict], stats: dict,
                      text: dict, url: str, citation: str, published: str) -> dict:
    """Return the Croissant description (a dict) of a release's JSONL ``files`` (``{"name", "sha256",
    "round", "split", "format"}``); ``columns``: the kind's ``release_columns``; ``url``: the release's page."""
    jsonl = [f for f in files if f["format"] == "jsonl"]
    names = [name for name, _, _ in FIXED] + [c["name"] for c in columns]
    distribution, record_sets = [], []
    for f in jsonl:
        set_id = f["name"].removeprefix("data/").removesuffix(".jsonl")
        distribution.append({"@type": "cr:FileObject", "@id": f["name"], "name": f["name"], "contentUrl": f["name"],
                             "encodingFormat": "application/jsonlines", "sha256": f["sha256"],
                             "description": f"Round {f['round']}, split {f['split']}: {f['rows']} examples, one JSON object per line."})
        record_sets.append({
            "@type": "cr:RecordSet", "@id": set_id, "name": set_id, "key": {"@id": f"{set_id}/uid"},
            "description": f"The examples of round {f['round']}, split {f['split']}.",
            "field": [{"@type": "cr:Field", "@id": f"{set_id}/{name}", "name": name, "dataType": TYPES.get(name, "sc:Text"),
                       "description": _describe(name, columns),
                       "source": {"fileObject": {"@id": f["name"]}, "extract": {"column": name}}} for name in names],
        })
    rounds = stats.get("rounds", [])
    dates = sorted(d for r in rounds for d in (r["start"], r["end"]) if d)
    models = sorted({m for r in rounds for m in r["models"]})
    description = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"{task.code}-release-{version}",
        "description": f"{task.name}: Dynabench dataset release {version} ({sum(f['rows'] for f in jsonl)} examples).",
        "url": url,
        "license": license,
        "version": version,
        "datePublished": published,
        "citeAs": citation,
        "creator": {"@type": "sc:Organization", "name": "Dynabench"},
        "keywords": ["Dynabench", "dynamic adversarial data collection", task.kind, task.code],
        "rai:dataCollection": (
            "Crowd annotators wrote examples on Dynabench to fool the model(s) in the loop of each round; other "
            "annotators validated them. Rounds: " + "; ".join(
                f"round {r['number']}: {r['collected']} collected, vMER {r['vmer'] if r['vmer'] is not None else 'not recorded'}"
                for r in rounds) + "."),
        "rai:dataCollectionType": ["Crowdsourced", "Adversarial (model in the loop)"],
        "rai:dataAnnotationProtocol": stats.get("consensus", {}).get("rule", ""),
        "rai:dataAnnotationPlatform": "Dynabench",
        "rai:annotationsPerItem": str(stats.get("consensus", {}).get("validations_needed", "")),
        "rai:machineAnnotationTools": ", ".join(models) or "none recorded",
        "rai:dataUseCases": text.get("intended_uses") or "Not written by the task's owners.",
        "rai:dataLimitations": text.get("limitations") or "Not written by the task's owners.",
        "rai:personalSensitiveInformation": "Annotators are not named in the files. Text written by annotators may contain anything they wrote.",
        "rai:dataReleaseMaintenancePlan": "Semantic versions: a new round is a new major version, relabelled, added or removed "
                                          "examples a new minor version; a release's files never change.",
        "distribution": distribution,
        "recordSet": record_sets,
    }
    if dates:
        description["rai:dataCollectionTimeframe"] = [dates[0], dates[-1]]
    return description


def _describe(name: str, columns: list[dict]) -> str:
    fixed = {"uid": "The example's id, unique in its round and split.", "round": "The round's number.",
             "split": "The split (train, dev, test, or all).", "tag": "The example's tag (a slice of the data); may be empty."}
    if name in fixed:
        return fixed[name]
    column = next(c for c in columns if c["name"] == name)
    if column["type"] == "label":
        return f"The label, one of: {', '.join(column['names'])}."
    if column["type"] == "json":
        return f"The target '{column['key']}' as JSON text."
    return f"Input field '{column['key']}'."
