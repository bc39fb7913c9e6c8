"""Croissant (MLCommons' JSON-LD dataset metadata) for a round export: the owner's JSON Lines file of
the round's examples with their validations (``validation.export.export_lines``), described
field by field with its sha256, licence, citation and the round's provenance.

The export names people by anonymous ids only and is for the task's owners (as the export
itself). ``contentUrl`` is the export's file name, relative: download the export and this
description into one folder and ``mlcroissant.Dataset(jsonld="folder/croissant.json")`` reads the
records from the file beside it, checking its sha256 (README, "Croissant"). The zip of a round with
its media files beside the JSONL (``validation.media_export``) has its own description
(``media_export_croissant``): the zip, the JSONL in it and a ``cr:FileSet`` of the files. Nested values
(context, input, target, model output, metadata, final target) are JSON objects in the file; each
scalar inside them is a field here (``input_text``, ``model_output_probs_positive``: a ``jsonPath``
transform of its column). Lists (a QA answer list, the validations) stay in the file only.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile

from tasks.data.croissant import CONFORMS_TO, CONTEXT, PAPER
from tasks.data.media import MediaType
from tasks.models import Round
from validation.export import export_lines
from validation.media_export import export_zip

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
    ("cluster", "sc:Integer", "The cluster the round's diversity report put it in (HDBSCAN over the validated examples that "
     "fooled the model, each example then in the cluster of the nearest centroid); -1: none; null: not yet placed."),
    ("near_duplicate_of", "sc:Integer", "The id of the first-written example of its near-duplicate group (cosine of the "
     "sentence embeddings at or above the round's threshold); null when it leads its group or is not yet placed."),
    ("group_size", "sc:Integer", "How many examples its near-duplicate group holds (1: no near-copy); null: not yet placed."),
    ("created_at", "sc:Date", "When it was written (ISO 8601 in the file)."),
    ("time_spent", "sc:Float", "Seconds the annotator spent on it."),
    ("ai_vote_counted", "sc:Boolean", "Whether an AI validator's vote counted toward its consensus (the round's judge "
     "policy); the AI votes themselves, with their reasons, are the list column ai_votes, apart from the validations."),
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


def export_file_name(round: Round, *, deduplicated: bool = False) -> str:
    """The round export's file name, as its download names it: ``<task code>-r<number>.jsonl``, and
    ``<task code>-r<number>-deduplicated.jsonl`` for the deduplicated view."""
    return f"{round.task.code}-r{round.number}{'-deduplicated' if deduplicated else ''}.jsonl"


def _examples(lines, file_id: str) -> tuple[str, int, list[dict]]:
    """``(sha256, number of lines, cr:Field list of record set "examples")`` of the export's ``lines``
    (an iterable of bytes blocks, each whole lines), its fields read from ``file_id``."""
    digest = hashlib.sha256()
    count = 0
    nested: dict[str, dict[str, str]] = {column: {} for column in NESTED}
    for block in lines:
        digest.update(block)
        for line in block.splitlines():
            if line.strip():
                count += 1
                row = json.loads(line)
                for column in NESTED:
                    _leaves(row.get(column), "", nested[column])

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
    return digest.hexdigest(), count, fields


def _round_dataset(round: Round, *, lines: int, sha256: str, download: str, export_url: str, page_url: str, license: str,
                   distribution: list[dict], record_sets: list[dict]) -> dict:
    """The Croissant dataset of an export of ``round`` (``lines`` examples; ``sha256``: the cited
    file's) around its ``distribution`` and ``record_sets``; ``download``: the file name to save the
    export under, beside the description."""
    task = round.task
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
            f"Download the export ({export_url}) next to this file under the name {download}."
        ),
        "url": page_url,
        "license": license,
        "citeAs": (
            f"@misc{{dynabench-{task.code}-round-{round.number}, title={{{task.name}, round {round.number}}}, "
            f"howpublished={{\\url{{{page_url}}}}}, note={{Dynabench round export, sha256 {sha256}}}}} {PAPER}"
        ),
        "version": "1.0.0",
        "datePublished": round.created_at.date().isoformat(),
        "creator": {"@type": "sc:Organization", "name": "Dynabench", "url": page_url.split("/tasks/")[0] or page_url},
        "keywords": ["Dynabench", "dynamic adversarial data collection", task.kind, task.code],
        "isBasedOn": provenance,
        "distribution": distribution,
        "recordSet": record_sets,
    }


def _examples_record_set(fields: list[dict]) -> dict:
    return {
        "@type": "cr:RecordSet", "@id": "examples", "name": "examples", "key": {"@id": "examples/id"},
        "description": "The round's examples, one record per line of the export.", "field": fields,
    }


def round_export_croissant(round: Round, *, export_url: str, page_url: str, license: str, deduplicated: bool = False) -> dict:
    """Return the Croissant JSON-LD (a dict) of the export of ``round`` as it stands now (its sha256
    computed from the very lines the export serves). ``export_url``: where the export downloads;
    ``page_url``: the round's page; ``license``: the dataset licence to state; ``deduplicated``: describe
    the deduplicated view (one example per near-duplicate group, ``validation.export.deduplicated``)."""
    file_id = export_file_name(round, deduplicated=deduplicated)
    sha256, lines, fields = _examples(export_lines([round], deduplicated=deduplicated), file_id)
    what = ("The round export's deduplicated view (JSON Lines): one example per near-duplicate group, with the group's "
            "size" if deduplicated else "The round export (JSON Lines)")
    distribution = [{
        "@type": "cr:FileObject", "@id": file_id, "name": file_id, "contentUrl": file_id,
        "encodingFormat": ENCODING, "sha256": sha256, "description": f"{what}, downloaded from {export_url}.",
    }]
    return _round_dataset(round, lines=lines, sha256=sha256, download=file_id, export_url=export_url, page_url=page_url,
                          license=license, distribution=distribution, record_sets=[_examples_record_set(fields)])


def media_export_croissant(round: Round, media: MediaType, *, export_url: str, page_url: str, license: str) -> dict:
    """Return the Croissant JSON-LD (a dict) of the round's zip with its ``media`` files beside the
    JSONL (``validation.media_export``), built now and described from its very bytes: the zip
    (``cr:FileObject``, its sha256), the JSONL inside it (``containedIn`` the zip), and the media
    files (a ``cr:FileSet`` inside the zip, ``encodingFormat`` their MIME types); record set
    ``examples`` (one per line, as ``round_export_croissant``) and record set ``<folder>`` (one per
    file: ``sha256``, the name an example's media context field holds, and ``content``, the file's
    bytes as ``sc:ImageObject`` or ``sc:AudioObject``). ``mlcroissant.Dataset`` reads both from the
    zip saved beside this description. Raises ``FileNotFoundError`` when a file is missing from the storage."""
    name = f"{round.task.code}-r{round.number}"
    zip_id, jsonl_id, files_id = f"{name}.zip", f"{name}.jsonl", f"{media.folder}-files"
    digest = hashlib.sha256()
    with export_zip([round], media, name=name) as out:
        while block := out.read(1024 * 1024):
            digest.update(block)
        archive = zipfile.ZipFile(out)
        with archive.open(f"{name}/{jsonl_id}") as jsonl:
            sha256, lines, fields = _examples(jsonl, jsonl_id)
        exts = sorted({member.rsplit(".", 1)[-1] for member in archive.namelist() if member.startswith(f"{name}/{media.folder}/")})
    distribution = [
        {"@type": "cr:FileObject", "@id": zip_id, "name": zip_id, "contentUrl": zip_id, "encodingFormat": "application/zip",
         "sha256": digest.hexdigest(), "description": f"The round export with its {media.folder} files (zip), downloaded from {export_url}."},
        {"@type": "cr:FileObject", "@id": jsonl_id, "name": jsonl_id, "contentUrl": f"{name}/{jsonl_id}", "containedIn": {"@id": zip_id},
         "encodingFormat": ENCODING, "sha256": sha256, "description": "The round export (JSON Lines), in the zip."},
    ]
    record_sets = [_examples_record_set(fields)]
    if exts:
        types = [media.content_types[ext] for ext in exts]
        distribution.append({
            "@type": "cr:FileSet", "@id": files_id, "name": files_id, "containedIn": {"@id": zip_id},
            "includes": f"{name}/{media.folder}/*", "encodingFormat": types[0] if len(types) == 1 else types,
            "description": f"The {media.folder} files the examples' contexts name, each once, as <sha256>.<ext>.",
        })
        source = {"fileSet": {"@id": files_id}}
        record_sets.append({
            "@type": "cr:RecordSet", "@id": media.folder, "name": media.folder, "key": {"@id": f"{media.folder}/sha256"},
            "description": f"One record per {media.folder} file beside the JSONL.",
            "field": [
                {"@type": "cr:Field", "@id": f"{media.folder}/sha256", "name": "sha256", "dataType": "sc:Text",
                 "description": "The file's sha256: the value of an example's context field that names it.",
                 "source": {**source, "extract": {"fileProperty": "filename"}, "transform": {"regex": r"^([0-9a-f]{64})\.\w+$"}}},
                {"@type": "cr:Field", "@id": f"{media.folder}/content", "name": "content", "dataType": media.data_type,
                 "description": "The file's bytes.", "source": {**source, "extract": {"fileProperty": "content"}}},
            ],
        })
    return _round_dataset(round, lines=lines, sha256=digest.hexdigest(), download=zip_id, export_url=export_url,
                          page_url=page_url, license=license, distribution=distribution, record_sets=record_sets)
