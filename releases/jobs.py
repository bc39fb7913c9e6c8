"""RQ entry points of the releases app."""

from releases.build import build


def build_release(release_id: int) -> str:
    """Build release ``release_id`` (``releases.build.build``) and return a one-line summary."""
    release = build(release_id)
    if release.status == release.Status.PUBLISHED:
        return f"release {release.task.code} {release.version}: {release.example_count} examples, sha256 {release.sha256}"
    return f"release {release_id}: {release.status} {release.failure_reason}".strip()
