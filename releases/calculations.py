"""Pure rules of releases, without the ORM: the next semantic version, the changelog between two
releases' contents, the content digest and the card's size category."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

#: The most uids a changelog lists per change (counts are always complete).
CHANGELOG_UIDS = 1000


@dataclass(frozen=True)
class Changes:
    """What changed between two releases' contents: uids (sorted) added, removed and relabelled
    (same round, split and uid, another target), and whether a round is new."""

    added: list[str]
    removed: list[str]
    relabelled: list[str]
    new_rounds: list[int]

    @property
    def data_changed(self) -> bool:
        return bool(self.added or self.removed or self.relabelled or self.new_rounds)

    def as_changelog(self, previous: str | None) -> dict:
        """``{"previous", "new_rounds", "added", "removed", "relabelled"}``; each change
        ``{"count", "uids"}`` with at most ``CHANGELOG_UIDS`` uids listed."""
        def part(uids):
            return {"count": len(uids), "uids": uids[:CHANGELOG_UIDS]}
        return {"previous": previous, "new_rounds": self.new_rounds, "added": part(self.added),
                "removed": part(self.removed), "relabelled": part(self.relabelled)}


def first_changelog(*, examples: int, rounds: list[int]) -> dict:
    """The changelog of a task's first release (every example added, uids not listed: all of them are new)."""
    return {"previous": None, "new_rounds": sorted(rounds), "added": {"count": examples, "uids": []},
            "removed": {"count": 0, "uids": []}, "relabelled": {"count": 0, "uids": []}}


def changes_between(old: dict[tuple, object] | None, new: dict[tuple, object]) -> Changes:
    """Return the ``Changes`` from ``old`` to ``new``: each a ``{(round, split, uid): target
    fingerprint}`` index of a release's examples (``old`` None: no previous release, everything is
    added and every round new)."""
    old = old or {}
    added = sorted(key[2] for key in new.keys() - old.keys())
    removed = sorted(key[2] for key in old.keys() - new.keys())
    relabelled = sorted(key[2] for key in new.keys() & old.keys() if new[key] != old[key])
    new_rounds = sorted({key[0] for key in new} - {key[0] for key in old})
    return Changes(added, removed, relabelled, new_rounds)


def next_version(previous: str | None, changes: Changes, *, text_changed: bool) -> str:
    """Return the version of a release after ``previous`` (``"MAJOR.MINOR.PATCH"``; None: the first
    release, ``1.0.0``): a new round → next major; examples added, removed or relabelled → next
    minor; only the card's text or the licence → next patch. Raises ``ValueError`` when nothing
    changed (no release is needed)."""
    if previous is None:
        return "1.0.0"
    major, minor, patch = (int(part) for part in previous.split("."))
    if changes.new_rounds:
        return f"{major + 1}.0.0"
    if changes.data_changed:
        return f"{major}.{minor + 1}.0"
    if text_changed:
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"nothing changed since {previous}")


def content_digest(files: list[dict]) -> str:
    """The sha256 of a release's content: of the ``"<sha256>  <name>\\n"`` lines of ``files``
    (``{"name", "sha256"}``) sorted by name, the lines ``sha256sum`` writes (so ``sha256sum -c``
    on them checks every file)."""
    lines = "".join(f"{f['sha256']}  {f['name']}\n" for f in sorted(files, key=lambda f: f["name"]))
    return hashlib.sha256(lines.encode()).hexdigest()


def size_category(count: int) -> str:
    """The Hugging Face hub's ``size_categories`` bucket of ``count`` examples (``n<1K`` ... ``n>1T``)."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, name in bounds:
        if count < bound:
            return name
    return "1B<n<10B"
