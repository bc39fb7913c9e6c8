"""What an import refuses: the error codes, a malformed record (``ImportRowError``), several of
them (``ImportErrors``), and ``Problems``, which decides whether the first problem stops the import
or the first ``max_errors`` are kept while the whole file is checked."""

from __future__ import annotations

from dynabench.errors import RuleError


class ImportErrorCode:
    FILE = "import_file_invalid"
    ROW = "import_row_invalid"
    OPTIONS = "import_options_invalid"


class ImportRowError(RuleError):
    """A record of the file is malformed; ``line`` is its 1-based line number in the file."""

    def __init__(self, line: int, reason: str):
        super().__init__(ImportErrorCode.ROW, f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class ImportErrors(RuleError):
    """Several records of the file are malformed (``max_errors`` > 1): ``errors`` holds the first
    of them (``ImportRowError``, in file order), ``total`` counts them all. Nothing was imported."""

    def __init__(self, errors: list[ImportRowError], total: int):
        rest = f" and {total - len(errors)} more" if total > len(errors) else ""
        super().__init__(
            ImportErrorCode.ROW,
            f"{total} line{'s' if total != 1 else ''} refused, nothing was imported: {errors[0].message}{rest}",
        )
        self.errors = errors
        self.total = total


class Problems:
    """Where row problems go: raised at once (``limit`` 1, the default), or kept (the first
    ``limit``) and counted until the end of the file (``raise_any``)."""

    def __init__(self, limit: int):
        self.limit = max(1, int(limit))
        self.kept: list[ImportRowError] = []
        self.total = 0

    def add(self, error: ImportRowError) -> None:
        if self.limit == 1:
            raise error
        self.total += 1
        if len(self.kept) < self.limit:
            self.kept.append(error)

    def raise_any(self) -> None:
        if self.total:
            raise ImportErrors(sorted(self.kept, key=lambda e: e.line), self.total)
