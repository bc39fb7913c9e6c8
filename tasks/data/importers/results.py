"""What an import did (``ImportResult``: rows added, already present, repeated, filtered out) and
the rule that a file giving no rows at all is refused (``no_rows_error``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dynabench.errors import RuleError
from tasks.data.importers.errors import ImportErrorCode
from tasks.data.importers.files import FileSpec


@dataclass
class ImportResult:
    """What an import did. ``added`` rows are new; ``unchanged`` were already stored with the
    same content; ``repeated`` were identical repeats within the file (``uid_from="content"``);
    ``filtered_out`` did not match the filters."""

    target: str
    added: int = 0
    unchanged: int = 0
    repeated: int = 0
    filtered_out: int = 0
    checksum: str = ""

    def summary(self) -> str:
        parts = [f"{self.added} added", f"{self.unchanged} already present"]
        if self.repeated:
            parts.append(f"{self.repeated} repeats skipped")
        if self.filtered_out:
            parts.append(f"{self.filtered_out} filtered out")
        return f"{self.target}: " + ", ".join(parts)


def no_rows_error(spec: FileSpec, result: ImportResult) -> None:
    """Refuse a file that gave no rows at all: none added, already present or repeated (all filtered out, or empty)."""
    if result.added + result.unchanged + result.repeated == 0:
        why = f" matched --filter {spec.filters}" if spec.filters else ""
        raise RuleError(ImportErrorCode.FILE, f"{Path(spec.path).name}: no rows{why}; nothing was imported")
