"""Croissant (MLCommons' JSON-LD dataset metadata) for a round export: the owner's JSON Lines file of
the round's examples with their validations (``validation.export.export_lines``), described
field by field with its sha256, licence, citation and the round's provenance.

The export names people by anonymous ids only and is for the task's owners (as the export
itself). ``contentUrl`` is the export's file name, relative: download the export and this
description into one folder and ``mlcroissant.Dataset(jsonld="folder/croissant.json")`` reads the
records from the file beside it, checking its sha256 (README, "Croissant"). Nested values
(context, input, target, model output, metadata, final target) are JSON objects in the file; each
scalar inside them is a field here (``input_text``, ``model_output_probs_positive``: a ``jsonPath``
transform of its column). Lists (a QA answer list, the validations) stay in the file only.
"""

from __future__ import annotations

import hashlib
import json
import re

from tasks.data.croissant import CONFORMS_TO, CONTEXT, PAPER
from tasks.models import Round
from validation.export import export_lines

ENCODING = "application/jsonlines"

#: The export's scalar columns (``validation.export.export_rows``): name, Croissant type, description.
FIELDS = [
    ("id", "sc:Integer", "The example's id on the platform."),
    ("task", "sc:Text", "The task's code."),
    ("round", "sc:Integer", "The round's number."),
    ("annotator", "sc:Text", "The annotator's anonymous id: sha256(round secret + user id)[:16]."),
    ("model_wrong", "sc:Boolean", "Whether the model was wrong, decided on the server."),
    ("origin", "sc:Text", "Where the example came from: written (unaided), assisted (from a writing assistant's "
     "suggestion) or generated (by a model, then validated blind)."),
    ("suggestion_distance", "sc:Integer", "Characters edited from the assistant's suggestion (Levenshtein), or null."),
    ("tag", "sc:Text", "The example's tag."),
    ("retracted", "sc:Boolean", "Retracted by its annotator."),
    ("flagged", "sc:Boolean", "Flagged by a validator."),
    ("split", "sc:Text", "The split the round's close put it in (train, dev, test), or empty."),
    ("validation_state", "sc:Text", "Where validation stands (e.g. verified_correct)."),
    ("created_at", "sc:Date", "When it was written (ISO 8601 in the file)."),
    ("time_spent", "sc:Float", "Seconds the annotator spent on it."),
]

#: The export's object columns: each scalar inside them (found in the export's lines) is a field.
NESTED = {
    "context": "the context shown to the annotator",
    "input": "the annotator's input",
    "target": "the annotator's label or answer",
    "model_output": "the model in the loop's answer",
    "metadata": "the example's metadata (explanations)",
    "final_target": "the final label of a validated example (owner correction > consensus > annotator)",
    "transfer": "a validated example's transfer rate: the share (rate) of the task's other models it fooled, and how many were tried",
}
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _leaves(value, path: str, out: dict) -> None:
    """Record ``{json path: Croissant type}`` of every scalar inside ``value`` reached through objects
    (lists are left to the file: Croissant reads no list of objects from a column)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if _KEY.match(str(key)):
                _leaves(child, f"{path}.{key}" if path else str(key), out)
    elif not isinstance(value, list) and value is not None and path:
        kind = "sc:Boolean" if isinstance(value, bool) else "sc:Integer" if isinstance(value, int) else \
            "sc:Float" if isinstance(value, float) else "sc:Text"
        known = out.get(path)
        out[path] = kind if known in (None, kind) else ("sc:Float" if {known, kind} <= {"sc:Integer", "sc:Float"} else "sc:Text")


def export_file_name(round: Round) -> str:
    """The round export's file name, as its download names it: ``<task code>-r<number>.jsonl``."""
    return f"{round.task.code}-r{round.number}.jsonl"


def round_export_croissant(round: Round, *, export_url: str, page_url: str, license: str) -> dict:
    """Return the Croissant JSON-LD (a dict) of the export of ``round`` as it stands now (its sha256
    computed from the very lines the export serves). ``export_url``: where the export downloads;
    ``page_url``: the round's page; ``license``: the dataset licence to state."""
    digest = hashlib.sha256()
    lines = 0
    nested: dict[str, dict[str, str]] = {column: {} for column in NESTED}
    for block in export_lines([round]):
        digest.update(block)
        for line in block.splitlines():
            if line.strip():
                lines += 1
                row = json.loads(line)
                for column in NESTED:
                    _leaves(row.get(column), "", nested[column])
    task = round.task
    file_id = export_file_name(round)

    def field(name: str, column: str, data_type: str, description: str, json_path: str | None = None) -> dict:
        source = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
        if json_path:
            source["transform"] = {"jsonPath": json_path}
        return {"@type": "cr:Field", "@id": f"examples/{name}", "name": name, "description": description,
                "dataType": data_type, "source": source}

    fields = [field(name, name, data_type, description) for name, data_type, description in FIELDS]
    for column, what in NESTED.items():
        for path, data_type in nested[column].items():
            fields.append(field(f"{column}_{path.replace('.', '_')}", column, data_type, f"'{path}' of {what}.", path))
    provenance = {
        "platform": "Dynabench", "task": task.code, "round": round.number, "status": round.status,
        "start": round.start.isoformat() if round.start else None, "end": round.end.isoformat() if round.end else None,
        "target_models": list(round.target_models.values_list("name", flat=True)), "examples": lines,
        "export": export_url,
    }
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"{task.code}-round-{round.number}",
        "description": (
            f"Round {round.number} of the Dynabench task '{task.name}' ({task.kind}): {lines} examples written against "
            f"the model(s) in the loop, with their validations (annotators anonymised). Round status {round.status}. "
            f"Download the export ({export_url}) next to this file under the name {file_id}."
        ),
        "url": page_url,
        "license": license,
        "citeAs": (
            f"@misc{{dynabench-{task.code}-round-{round.number}, title={{{task.name}, round {round.number}}}, "
            f"howpublished={{\\url{{{page_url}}}}}, note={{Dynabench round export, sha256 {digest.hexdigest()}}}}} {PAPER}"
        ),
        "version": "1.0.0",
        "datePublished": round.created_at.date().isoformat(),
        "creator": {"@type": "sc:Organization", "name": "Dynabench", "url": page_url.split("/tasks/")[0] or page_url},
        "keywords": ["Dynabench", "dynamic adversarial data collection", task.kind, task.code],
        "isBasedOn": provenance,
        "distribution": [
            {
                "@type": "cr:FileObject", "@id": file_id, "name": file_id, "contentUrl": file_id,
                "encodingFormat": ENCODING, "sha256": digest.hexdigest(),
                "description": f"The round export (JSON Lines), downloaded from {export_url}.",
            },
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet", "@id": "examples", "name": "examples", "key": {"@id": "examples/id"},
                "description": "The round's examples, one record per line of the export.", "field": fields,
            },
        ],
    }
