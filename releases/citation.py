"""How to cite a release: BibTeX and CITATION.cff (Citation File Format 1.2.0)."""

from __future__ import annotations

import yaml

from tasks.data.croissant import PAPER


def bibtex(*, task, version: str, url: str, sha256: str, year: int) -> str:
    """A ``@misc`` entry for the release (``url``: its page; ``sha256``: its content digest), then the Dynabench paper."""
    key = f"dynabench-{task.code}-{version.replace('.', '-')}"
    return (f"@misc{{{key},\n  title = {{{task.name}: Dynabench dataset release {version}}},\n"
            f"  author = {{{{Dynabench}}}},\n  year = {{{year}}},\n  howpublished = {{\\url{{{url}}}}},\n"
            f"  note = {{Version {version}, content sha256 {sha256}}}\n}}\n\n{PAPER}\n")


def citation_cff(*, task, version: str, url: str, sha256: str, date: str, license: str) -> str:
    """``CITATION.cff`` (YAML) of the release, ``type: dataset``, with the Dynabench paper as preferred-citation's reference."""
    data = {
        "cff-version": "1.2.0",
        "message": "If you use this dataset, please cite it as below.",
        "type": "dataset",
        "title": f"{task.name}: Dynabench dataset release {version}",
        "version": version,
        "date-released": date,
        "url": url,
        "license": license,
        "authors": [{"name": "Dynabench"}],
        "identifiers": [{"type": "other", "value": f"sha256:{sha256}", "description": "The release's content digest."}],
        "references": [{"type": "conference-paper", "title": "Dynabench: Rethinking Benchmarking in NLP",
                        "authors": [{"family-names": "Kiela", "given-names": "Douwe"}], "year": 2021,
                        "conference": {"name": "NAACL-HLT 2021"}}],
    }
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
