"""Croissant (MLCommons' JSON-LD metadata format for ML datasets, https://mlcommons.org/croissant/)
for a task's datasets, and the JSON Lines file it describes.

``dataset_lines(dataset, with_labels=...)`` yields the dataset's items as JSON Lines, one flat
object per item: ``uid``, ``split``, ``tag``, the item's input fields, then its target fields
(only ``with_labels``: a hidden set's description and file carry no labels for readers who may
not see them, ``tasks.selectors.can_see_labels``). Nested values (a QA item's answers) are
written as JSON text. ``dataset_croissant(dataset, ...)`` describes exactly that file: its URL
and sha256, one ``cr:Field`` per column with its type (read from the items themselves: no branch
on the task's kind), the split as a ``cr:Split`` record set, the licence, a citation, and the
platform's provenance record (version, canonical-content sha256, source and its sha256,
dates). ``mlcroissant validate`` accepts it and ``mlcroissant.Dataset(jsonld=...)`` reads the
records (tests: ``tests/api/test_croissant_of_every_built_in_dataset_validates.py``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterator

from django.conf import settings

from tasks.models import Dataset

#: Croissant 1.0's JSON-LD context, as the specification gives it.
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
ENCODING = "application/jsonlines"
#: Columns every line has, before the item's input and target fields.
FIXED = ("uid", "split", "tag")
#: Croissant's split names for the platform's splits (``cr:TrainingSplit`` ...).
SPLIT_URLS = {"train": "cr:TrainingSplit", "dev": "cr:ValidationSplit", "test": "cr:TestSplit"}
PAPER = (
    "@inproceedings{kiela-etal-2021-dynabench, title={Dynabench: Rethinking Benchmarking in NLP}, author={Kiela, Douwe "
    "and Bartolo, Max and Nie, Yixin and Kaushik, Divyansh and Geiger, Atticus and Wu, Zhengxuan and Vidgen, Bertie and "
    "Prasad, Grusha and Singh, Amanpreet and Ringshia, Pratik and others}, booktitle={Proceedings of NAACL-HLT 2021}, "
    "pages={4110--4124}, year={2021}}"
)


def dataset_license_of_task(task) -> str:
    """The licence of a task's data: the task's ``config["license"]`` when the owner set one, else
    ``settings.DATASET_LICENSE`` (default CC BY 4.0)."""
    return str((task.config or {}).get("license") or getattr(settings, "DATASET_LICENSE", "")
               or "https://creativecommons.org/licenses/by/4.0/")


def dataset_license(dataset: Dataset) -> str:
    """The dataset's licence (``dataset_license_of_task`` of its task)."""
    return dataset_license_of_task(dataset.task)


def _columns(dataset: Dataset, with_labels: bool) -> tuple[list[str], list[str], dict[str, str]]:
    """``(input columns, target columns, {column: Croissant data type})`` read from the items:
    every key any item has, in first-seen order; a column whose values are all whole numbers is
    ``sc:Integer``, all numbers ``sc:Float``, all booleans ``sc:Boolean``, anything else ``sc:Text``."""
    inputs: dict[str, set] = {}
    targets: dict[str, set] = {}
    rows = dataset.items.order_by("pk").values_list("input", "target")
    for data, target in rows.iterator(chunk_size=5000):
        for key, value in (data or {}).items():
            inputs.setdefault(str(key), set()).add(_type(value))
        if with_labels:
            for key, value in (target or {}).items():
                targets.setdefault(str(key), set()).add(_type(value))
    taken = set(FIXED)
    input_names = []
    for key in inputs:
        name = key if key not in taken else f"input_{key}"
        taken.add(name)
        input_names.append(name)
    target_names = []
    for key in targets:
        name = key if key not in taken else f"target_{key}"
        taken.add(name)
        target_names.append(name)
    types = {name: _merge(kinds) for name, kinds in zip(input_names + target_names, [*inputs.values(), *targets.values()])}
    return list(zip(inputs, input_names)), list(zip(targets, target_names)), types


def _type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "sc:Boolean"
    if isinstance(value, int):
        return "sc:Integer"
    if isinstance(value, float):
        return "sc:Float"
    return "sc:Text"


def _merge(kinds: set) -> str:
    kinds = kinds - {"null"}
    if not kinds:
        return "sc:Text"
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds <= {"sc:Integer", "sc:Float"}:
        return "sc:Float"
    return "sc:Text"


def _cell(value, data_type: str):
    if value is None:
        return None
    if data_type == "sc:Text" and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def dataset_lines(dataset: Dataset, *, with_labels: bool, chunk: int = 2000) -> Iterator[bytes]:
    """Yield the dataset's items as UTF-8 JSON Lines in item order, in blocks of ``chunk`` lines:
    ``{"uid", "split", "tag", <input fields>, <target fields when with_labels>}`` (see the module
    docstring). The same bytes every time for the same content, so their sha256 is citable."""
    input_columns, target_columns, types = _columns(dataset, with_labels)
    block = []
    rows = dataset.items.order_by("pk").values_list("uid", "tag", "input", "target")
    for uid, tag, data, target in rows.iterator(chunk_size=5000):
        line = {"uid": uid, "split": dataset.split or "", "tag": tag or ""}
        for key, name in input_columns:
            line[name] = _cell((data or {}).get(key), types[name])
        for key, name in target_columns:
            line[name] = _cell((target or {}).get(key), types[name])
        block.append(json.dumps(line, ensure_ascii=False) + "\n")
        if len(block) >= chunk:
            yield "".join(block).encode()
            block = []
    if block:
        yield "".join(block).encode()


def dataset_croissant(dataset: Dataset, *, with_labels: bool, file_url: str, page_url: str) -> dict:
    """Return the Croissant JSON-LD (a dict) describing ``dataset_lines(dataset, with_labels=...)``
    served at ``file_url`` (its sha256 computed from those very bytes); ``page_url``: where the
    dataset is described on the platform. Without labels the description lists no target field
    and says so."""
    input_columns, target_columns, types = _columns(dataset, with_labels)
    digest = hashlib.sha256()
    for block in dataset_lines(dataset, with_labels=with_labels):
        digest.update(block)
    task = dataset.task
    file_id = f"{dataset.name}.jsonl"

    def field(name: str, description: str, data_type: str | None = None, **extra) -> dict:
        return {
            "@type": "cr:Field", "@id": f"items/{name}", "name": name, "description": description,
            "dataType": data_type or types.get(name, "sc:Text"),
            "source": {"fileObject": {"@id": file_id}, "extract": {"column": name}}, **extra,
        }

    fields = [
        field("uid", "The item's id, unique in the dataset; predictions files name items by it.", "sc:Text"),
        field("split", "The dataset's split.", "sc:Text", references={"field": {"@id": "splits/name"}}),
        field("tag", "The item's tag (a slice of the data, e.g. a premise group); may be empty.", "sc:Text"),
        *[field(name, f"Input field '{key}' of the {task.name} task.") for key, name in input_columns],
        *[field(name, f"Target field '{key}' (the gold label or answer).") for key, name in target_columns],
    ]
    provenance = {
        "platform": "Dynabench", "task": task.code, "round": dataset.round.number if dataset.round_id else None,
        "dataset_id": dataset.pk, "version": dataset.version, "content_sha256": dataset.checksum,
        "source": dataset.source, "source_sha256": dataset.source_checksum, "access": dataset.access,
        "label_visibility": dataset.label_visibility, "labels_included": with_labels,
    }
    hidden_note = (
        "" if with_labels else
        " This is a hidden set: its labels never leave the platform, so this description and its file carry the inputs only."
    )
    split = dataset.split or "unsplit"
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"{task.code}-{dataset.name}",
        "description": (
            f"{dataset.description or dataset.name}: {dataset.items.count()} items of the Dynabench task "
            f"'{task.name}' ({task.kind}), split {split}.{hidden_note} Provenance: version {dataset.version}, "
            f"canonical content sha256 {dataset.checksum or 'not computed'}, source {dataset.source or 'not recorded'}."
        ),
        "url": page_url,
        "license": dataset_license(dataset),
        "citeAs": (
            f"@misc{{dynabench-{task.code}-{dataset.name}-v{dataset.version}, title={{{task.name}: {dataset.name} "
            f"(version {dataset.version})}}, howpublished={{\\url{{{page_url}}}}}, note={{Dynabench dataset, sha256 "
            f"{digest.hexdigest()}}}}} {PAPER}"
        ),
        "version": f"{dataset.version}.0.0",
        "datePublished": dataset.created_at.date().isoformat(),
        "dateModified": (dataset.content_changed_at or dataset.created_at).date().isoformat(),
        "creator": {"@type": "sc:Organization", "name": "Dynabench", "url": page_url.split("/api/")[0] or page_url},
        "keywords": ["Dynabench", "dynamic adversarial data collection", task.kind, task.code],
        "isBasedOn": provenance,
        "distribution": [
            {
                "@type": "cr:FileObject", "@id": file_id, "name": file_id, "contentUrl": file_url,
                "encodingFormat": ENCODING, "sha256": digest.hexdigest(),
                "description": "One JSON object per item (JSON Lines)." + (" No labels: a hidden set." if not with_labels else ""),
            },
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet", "@id": "splits", "name": "splits", "dataType": "cr:Split",
                "description": "The dataset's split.", "key": {"@id": "splits/name"},
                "field": [
                    {"@type": "cr:Field", "@id": "splits/name", "name": "name", "dataType": "sc:Text", "description": "Split name."},
                    {"@type": "cr:Field", "@id": "splits/url", "name": "url", "dataType": "sc:URL", "description": "Croissant's split."},
                ],
                "data": [{"splits/name": dataset.split or "", "splits/url": SPLIT_URLS.get(dataset.split, "cr:TrainingSplit")}],
            },
            {
                "@type": "cr:RecordSet", "@id": "items", "name": "items", "key": {"@id": "items/uid"},
                "description": "The dataset's items, one record per line of the file.", "field": fields,
            },
        ],
    }
